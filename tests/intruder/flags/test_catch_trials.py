"""Catch trials (issue 48): made-up persons nobody can know, served to every intruder among
their texts without taking a place; naming someone for two of them flags all the
participant's answers (one honest overclaim flags nobody), and their judgments never reach
the rates."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from intruder.analysis.selectors import study_judgments, study_texts
from intruder.enrolment import EnrolmentRefused
from intruder.evidence.catch_trials import catch_trial_add
from intruder.evidence.selectors import Flag, judgments_flag_status
from intruder.models import AnonymizedText, Assignment, Participant, Study, TargetPerson
from intruder.selectors.participant import intruder_group_capacities
from intruder.services.assignment import assignment_next, catch_positions
from intruder.services.judgments import judgment_submit
from intruder.services.participants import participant_enroll
from tests.intruder.factories import make_participant, make_study, make_texts, make_user

pytestmark = pytest.mark.django_db

CATCH = (
    "PERSON_1 restores clock towers in a small coastal town and keeps bees on the roof of "
    "the old post office. PERSON_1 once walked from one end of the country to the other."
)
T0 = timezone.now().replace(microsecond=0) - timedelta(hours=1)


@pytest.fixture
def study():
    """Four texts per intruder, two of them catch trials (the default); each real text one
    place, so a catch trial that held a place would leave later intruders without one."""
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=4, judgments_per_text=1)
    make_texts(study=study, count=8)
    catch_trial_add(study=study, text=CATCH)
    catch_trial_add(study=study, text=CATCH + " PERSON_1 bakes bread at dawn.")
    return study


def judge_one(study, participant):
    return judge_all(study, name="", participant=participant)


def judge_all(study, *, name, catch_names=None, participant=None):
    """One participant answers every text, each 60 s after serving: "yes" and `name` for a
    real text (for the n-th catch trial `catch_names[n]`, default `name`), "no idea" where
    empty."""
    participant = participant or make_participant(
        study=study, consented_at=T0, instructions_seen_at=T0
    )
    catch_names = list(catch_names) if catch_names is not None else None
    clock, judgments = T0, []
    # Read afresh before each text, as each request reads it.
    while (assignment := assignment_next(participant=fresh(participant), now=clock)) is not None:
        Assignment.objects.filter(pk=assignment.pk).update(shown_at=clock)
        clock += timedelta(seconds=60)
        catch = assignment.text.description.target.catch
        said = catch_names.pop(0) if catch and catch_names is not None else name
        judgment = judgment_submit(
            participant=participant,
            assignment_id=assignment.pk,
            self_identified=bool(said),
            guessed_name=said,
            revealing_text="the bees" if said else "",
            other_knowledge="" if said else "No idea.",
            now=clock,
        ).judgment
        judgments.append((catch, judgment))
    return judgments


def fresh(participant):
    participant.refresh_from_db()
    return participant


def codes(judgment) -> set[str]:
    judgment.refresh_from_db()
    return {flag["code"] for flag in judgment.flags}


def test_a_catch_trial_is_a_released_text_of_a_made_up_person(study):
    text = AnonymizedText.objects.filter(description__target__catch=True).first()
    assert text.status == AnonymizedText.Status.RELEASED
    assert text.text == CATCH
    target = text.description.target
    assert target.key == "catch_1" and target.name and target.group in ("famous", "fictitious",
                                                                        "semifamous")  # fmt: skip


def test_each_intruder_is_shown_the_studys_catch_trials_among_their_texts_holding_no_place(study):
    """Six intruders: every one judges 2 catch trials and 2 real texts; the 8 real texts' one
    place each is filled only by real judgments (a catch trial never takes one)."""
    positions = []
    for _ in range(4):
        judged = judge_all(study, name="")
        assert [catch for catch, _ in judged].count(True) == 2 and len(judged) == 4
        positions.append(tuple(j.assignment.position for catch, j in judged if catch))
    assert len(set(positions)) > 1  # drawn per participant, not the same places for all
    catch_texts = AnonymizedText.objects.filter(description__target__catch=True)
    assert all(text.judgments.count() == 4 for text in catch_texts)
    real = AnonymizedText.objects.filter(description__target__catch=False)
    assert sorted(text.judgments.count() for text in real) == [1] * 8
    # The real places are full: a fifth intruder (past enrolment's check, which refuses them:
    # test below) gets no real text, at most the catch trials drawn before their first text.
    assert all(catch for catch, _ in judge_all(study, name=""))


def test_positions_are_drawn_once_so_every_request_agrees(study):
    participant = make_participant(study=study, consented_at=T0, instructions_seen_at=T0)
    assert catch_positions(participant=participant) == catch_positions(participant=participant)
    assert len(catch_positions(participant=participant)) == 2


@pytest.mark.parametrize(
    ("asked", "catch_texts", "served"), [(0, 2, 0), (2, 0, 0), (2, 1, 1), (5, 2, 2)]
)
def test_an_intruder_is_shown_what_the_study_asks_at_most_what_it_has(asked, catch_texts, served):
    study = make_study(
        kind=Study.Kind.INTRUDER,
        items_per_participant=3,
        judgments_per_text=3,
        catch_trials_per_participant=asked,
    )
    make_texts(study=study, count=4)
    for n in range(catch_texts):
        catch_trial_add(study=study, text=f"{CATCH} {n}")
    judged = judge_all(study, name="")
    # Never every text: one real text at least (3 texts, 2 catch trials at most).
    assert [catch for catch, _ in judged].count(True) == min(served, 2)
    assert len(judged) == 3


def test_one_catch_trial_named_flags_nobody_an_honest_overclaim(study):
    judged = judge_all(study, name="", catch_names=["Adele", ""])
    assert [j.guessed_name for catch, j in judged if catch] == ["Adele", ""]
    assert not any(Flag.CATCH_IDENTIFIED in codes(j) for _, j in judged)


def test_naming_someone_for_two_catch_trials_flags_every_answer_of_the_participant(study):
    """The careless responder: a random famous name for every text. From the second catch
    trial on, all their answers carry the flag, those made before it too."""
    judged = judge_all(study, name="Taylor Swift")
    assert all(Flag.CATCH_IDENTIFIED in codes(j) for _, j in judged)
    reason = next(f["reason"] for f in judged[-1][1].flags if f["code"] == Flag.CATCH_IDENTIFIED)
    assert "Named someone for 2 made-up persons" in reason and "“Taylor Swift”" in reason
    status = judgments_flag_status(study)
    assert all(status[j.pk].excluded for _, j in judged)


def test_a_rule_of_one_flags_the_first_naming(study):
    study.exclusion_rules = {"catch_named_min": 1}
    study.save()
    judged = judge_all(study, name="", catch_names=["", "Adele"])
    assert all(Flag.CATCH_IDENTIFIED in codes(j) for _, j in judged)


def test_saying_no_to_the_catch_trials_is_not_flagged(study):
    judged = judge_all(study, name="Taylor Swift", catch_names=["", ""])
    assert not any(Flag.CATCH_IDENTIFIED in codes(j) for _, j in judged)


def test_catch_trials_never_reach_the_rates(study):
    judged = judge_all(study, name="Taylor Swift")
    real = sorted(j.pk for catch, j in judged if not catch)
    frame = study_judgments(study)
    assert sorted(frame["judgment_id"]) == real
    texts = study_texts(study)
    assert not set(texts["text_id"]) & {j.text_id for catch, j in judged if catch}


@pytest.mark.parametrize("text", ["", "   ", "x" * 5001])
def test_a_catch_trial_needs_a_text(study, text):
    with pytest.raises(ValidationError):
        catch_trial_add(study=study, text=text)


def test_a_collection_study_has_no_catch_trials():
    with pytest.raises(ValidationError):
        catch_trial_add(study=make_study(kind=Study.Kind.COLLECTION), text=CATCH)


def test_the_researcher_adds_one_on_the_flags_page_and_bad_input_is_a_message(client):
    owner = make_user()
    study = make_study(owner=owner, kind=Study.Kind.INTRUDER)
    client.force_login(owner)
    url = reverse("researcher-catch-trial", args=[study.slug])
    response = client.post(url, {"text": ""}, follow=True)
    assert response.status_code == 200
    assert "made-up person" in response.content.decode()
    client.post(url, {"text": CATCH})
    assert TargetPerson.objects.filter(study=study, catch=True).count() == 1
    page = client.get(reverse("researcher-flags", args=[study.slug])).content.decode()
    assert "This study has 1 catch trial;" in page
    assert "each intruder is shown 1 of their 10 texts as catch trial " in page
    # The default rule asks for two namings, and one catch trial is all an intruder sees.
    assert "it can flag nobody" in page


def test_a_viewer_cannot_add_one(client):
    study = make_study(kind=Study.Kind.INTRUDER)
    client.force_login(make_user())
    response = client.post(reverse("researcher-catch-trial", args=[study.slug]), {"text": CATCH})
    assert response.status_code == 404
    assert not TargetPerson.objects.filter(study=study, catch=True).exists()


def test_catch_trials_take_no_place_so_the_study_enrols_as_many_as_its_texts_hold(study):
    """8 real texts, one place each, 2 of each intruder's 4 texts catch trials: 4 intruders,
    not 2, before the study is full (it counted catch trials as places owed before)."""
    enrolled = []
    for n in range(4):
        enrolled.append(participant_enroll(study=study, prolific_pid=f"PID{n:021d}").participant)
    capacity = intruder_group_capacities(study=study)
    assert sum(c.owed for c in capacity) == 8 and sum(c.unclaimed for c in capacity) == 0
    with pytest.raises(EnrolmentRefused) as refusal:
        participant_enroll(study=study, prolific_pid="PID" + "9" * 21)
    assert refusal.value.code == EnrolmentRefused.FULL
    for participant in enrolled:
        Participant.objects.filter(pk=participant.pk).update(
            consented_at=T0, instructions_seen_at=T0, group=participant.group or "fictitious"
        )
    judged = [judge_one(study, participant) for participant in enrolled]
    assert [sum(not catch for catch, _ in j) for j in judged] == [2, 2, 2, 2]

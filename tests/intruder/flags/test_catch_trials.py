"""Catch trials (issue 48): a made-up person nobody can know, served like the others; naming
someone for it is flagged, and its judgments never reach the rates."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from intruder.analysis.selectors import study_judgments, study_texts
from intruder.evidence.catch_trials import catch_trial_add
from intruder.evidence.selectors import Flag
from intruder.models import AnonymizedText, Assignment, Study, TargetPerson
from intruder.services.assignment import assignment_next
from intruder.services.judgments import judgment_submit
from tests.intruder.factories import make_participant, make_study, make_texts, make_user

pytestmark = pytest.mark.django_db

CATCH = (
    "PERSON_1 restores clock towers in a small coastal town and keeps bees on the roof of "
    "the old post office. PERSON_1 once walked from one end of the country to the other."
)
T0 = timezone.now().replace(microsecond=0) - timedelta(hours=1)


@pytest.fixture
def study():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2)
    make_texts(study=study, count=1)
    catch_trial_add(study=study, text=CATCH)
    return study


def judge_all(study, *, name: str):
    """One participant answers both texts (one real, one catch), each 60 s after serving."""
    participant = make_participant(study=study, consented_at=T0, instructions_seen_at=T0)
    clock, judgments = T0, {}
    for _ in range(2):
        assignment = assignment_next(participant=participant, now=clock)
        Assignment.objects.filter(pk=assignment.pk).update(shown_at=clock)
        clock += timedelta(seconds=60)
        judgment = judgment_submit(
            participant=participant,
            assignment_id=assignment.pk,
            self_identified=bool(name),
            guessed_name=name,
            revealing_text="the bees" if name else "",
            other_knowledge="" if name else "No idea.",
            now=clock,
        ).judgment
        judgments[assignment.text.description.target.catch] = judgment
    return judgments


def test_a_catch_trial_is_a_released_text_of_a_made_up_person(study):
    text = AnonymizedText.objects.get(description__target__catch=True)
    assert text.status == AnonymizedText.Status.RELEASED
    assert text.text == CATCH
    target = text.description.target
    assert target.key == "catch_1" and target.name and target.group in ("famous", "fictitious",
                                                                        "semifamous")  # fmt: skip


def test_naming_someone_for_the_catch_trial_is_flagged_and_the_real_text_is_not(study):
    judgments = judge_all(study, name="Taylor Swift")
    codes = {flag["code"] for flag in judgments[True].flags}
    assert Flag.CATCH_IDENTIFIED in codes
    reason = next(f["reason"] for f in judgments[True].flags if f["code"] == Flag.CATCH_IDENTIFIED)
    assert "Named “Taylor Swift” for a made-up person" in reason
    assert Flag.CATCH_IDENTIFIED not in {flag["code"] for flag in judgments[False].flags}


def test_saying_no_to_the_catch_trial_is_not_flagged(study):
    judgments = judge_all(study, name="")
    assert Flag.CATCH_IDENTIFIED not in {flag["code"] for flag in judgments[True].flags}


def test_catch_trials_never_reach_the_rates(study):
    judgments = judge_all(study, name="Taylor Swift")
    frame = study_judgments(study)
    assert list(frame["judgment_id"]) == [judgments[False].pk]
    texts = study_texts(study)
    assert list(texts["text_id"]) == [judgments[False].text_id]


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
    assert "This study has 1 catch trial." in page


def test_a_viewer_cannot_add_one(client):
    study = make_study(kind=Study.Kind.INTRUDER)
    client.force_login(make_user())
    response = client.post(reverse("researcher-catch-trial", args=[study.slug]), {"text": CATCH})
    assert response.status_code == 404
    assert not TargetPerson.objects.filter(study=study, catch=True).exists()

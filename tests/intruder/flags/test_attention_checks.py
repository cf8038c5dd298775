"""Attention checks: instructed-response items among an intruder's texts, scored apart."""

import random
import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from intruder.evidence.attention import (
    BUILT_IN_CHECKS,
    attention_answer_passes,
    attention_check_places,
)
from intruder.evidence.flags import exclusion_rules_set
from intruder.evidence.models import AttentionCheck
from intruder.evidence.selectors import Flag
from intruder.exchange.exports import render_table
from intruder.models import Assignment, Judgment, PersonGroup, Study
from tests.intruder.factories import (
    make_description,
    make_participant,
    make_study,
    make_target,
    make_text,
)

pytestmark = pytest.mark.django_db

OWN_PROMPT = "Attention check: type the colour of a clear daytime sky."


@pytest.mark.parametrize(
    ("answer", "expected", "passes"),
    [
        ("orange", "orange", True),
        ("  Orange. ", "orange", True),
        ("ORANGE", "orange", True),
        ("the word is orange", "orange", True),
        ("Blau", "blue", False),
        ("oranges", "orange", False),
        ("apple", "orange", False),
        ("", "orange", False),
        ("!!!", "orange", False),
        ("Ice Cream", "ice cream", True),
        ("café", "cafe", True),
    ],
)
def test_answers_are_scored_ignoring_case_accents_and_punctuation(answer, expected, passes):
    assert attention_answer_passes(answer=answer, expected=expected) is passes


@pytest.mark.parametrize(("count", "texts", "placed"), [(1, 5, 1), (3, 5, 3), (9, 4, 3), (2, 1, 0)])
def test_checks_sit_between_texts_never_before_the_first(count, texts, placed):
    for seed in range(20):
        places = attention_check_places(count=count, texts=texts, rng=random.Random(seed))
        assert len(places) == placed == len(set(places))
        assert all(1 <= place <= texts - 1 for place in places)


def make_checked_study(**fields) -> Study:
    study = make_study(
        **{
            "kind": Study.Kind.INTRUDER,
            "items_per_participant": 3,
            "judgments_per_text": 2,
            "attention_checks": 1,
            **fields,
        }
    )
    for i in range(4):
        target = make_target(study=study, group=PersonGroup.FAMOUS, name=f"Oriel Vantassel{i}")
        make_text(study=study, description=make_description(study=study, target=target))
    return study


def started(study):
    now = timezone.now()
    return make_participant(study=study, consented_at=now, instructions_seen_at=now)


def judge_current(client, participant) -> None:
    home = reverse("participant-home", args=[participant.token])
    page = client.get(home).content.decode()
    assignment_id = re.search(r'name="assignment_id" value="(\d+)"', page).group(1)
    response = client.post(
        reverse("participant-judge", args=[participant.token]),
        {"assignment_id": assignment_id, "self_identified": "no", "other_knowledge": "A sailor."},
    )
    assert response.status_code == 302


def check_page(client, participant) -> str:
    page = client.get(reverse("participant-home", args=[participant.token])).content.decode()
    assert 'id="check-form"' in page
    return page


def answer_check(client, participant, page: str, answer: str):
    check_id = re.search(r'name="check_id" value="(\d+)"', page).group(1)
    return client.post(
        reverse("participant-check", args=[participant.token]),
        {"check_id": check_id, "answer": answer},
    )


def attention_flagged(judgment) -> bool:
    return any(flag["code"] == Flag.ATTENTION for flag in judgment.flags)


def test_checks_are_off_by_default():
    assert Study().attention_checks == 0


def test_a_passed_check_flags_nothing_and_is_never_counted_as_a_text(client):
    study = make_checked_study(attention_check_prompt=OWN_PROMPT, attention_check_answer="blue")
    participant = started(study)
    for _ in range(3):
        page = client.get(reverse("participant-home", args=[participant.token])).content.decode()
        if 'id="check-form"' in page:
            # The researcher's instruction is shown; the expected answer never is.
            assert OWN_PROMPT in page and "blue" not in page.lower()
            assert answer_check(client, participant, page, "Blue!").status_code == 302
        judge_current(client, participant)
    page = client.get(reverse("participant-home", args=[participant.token])).content.decode()
    assert "Thank you" in page or "completion" in page.lower()  # the debrief: 3 texts, done
    check = AttentionCheck.objects.get(participant=participant)
    assert check.passed is True and check.answer == "Blue!"
    assert 1 <= check.after_texts <= 2
    assert Assignment.objects.filter(participant=participant).count() == 3
    assert not any(attention_flagged(j) for j in Judgment.objects.filter(participant=participant))
    # Exports: no check among the texts' judgments; their own table flags them.
    assert render_table(study, "judgments", "csv").count("\r\n") == 1 + 3
    rows = render_table(study, "attention_checks", "jsonl").splitlines()
    assert len(rows) == 1 and '"attention_check": true' in rows[0] and '"passed": true' in rows[0]
    assert '"attention_checks_passed": 1' in render_table(study, "participants", "jsonl")


def test_a_failed_check_flags_every_judgment_of_the_participant_before_and_after(client):
    from intruder.analysis.selectors import study_report

    study = make_checked_study()
    # These posts carry no telemetry and come fast: only the check decides here.
    exclusion_rules_set(study=study, exclude=[Flag.ATTENTION], thresholds={})
    honest, careless = started(study), started(study)
    for participant, answer in ((honest, None), (careless, "banana")):
        for _ in range(3):
            page = client.get(reverse("participant-home", args=[participant.token]))
            page = page.content.decode()
            if 'id="check-form"' in page:
                check = AttentionCheck.objects.get(participant=participant)
                assert check.prompt in page
                assert (check.prompt, check.expected) in BUILT_IN_CHECKS
                answer_check(client, participant, page, answer or check.expected.upper())
            judge_current(client, participant)
    assert AttentionCheck.objects.get(participant=honest).passed is True
    assert AttentionCheck.objects.get(participant=careless).passed is False
    flagged = [{f["code"] for f in j.flags} for j in careless.judgments.all()]
    assert len(flagged) == 3 and all(Flag.ATTENTION in codes for codes in flagged)
    assert not any(attention_flagged(j) for j in honest.judgments.all())
    table = study_report(study).tables["rates_flagged"]
    overall = table[table["scope"] == "overall"].iloc[0]
    assert overall["n_judgments_all"] == 6 and overall["n_judgments_excluded"] == 3
    client.force_login(study.owner)
    flags_page = client.get(reverse("researcher-flags", args=[study.slug])).content.decode()
    assert "attention check" in flags_page.lower()


def test_an_empty_answer_is_asked_again_after_a_redirect_and_a_repeat_keeps_the_first(client):
    study = make_checked_study(items_per_participant=2)  # the check's only place: after text 1
    participant = started(study)
    judge_current(client, participant)
    page = check_page(client, participant)
    response = answer_check(client, participant, page, "   ")
    assert response.status_code == 302  # post/redirect/get, errors included
    page = check_page(client, participant)
    assert "Please type your answer" in page and 'aria-invalid="true"' in page
    check = AttentionCheck.objects.get(participant=participant)
    assert check.answered_at is None and check.shown_at is not None
    answer_check(client, participant, page, "wrong")
    answer_check(client, participant, page, check.expected)  # Back, then a second post
    check.refresh_from_db()
    assert check.passed is False and check.answer == "wrong"
    home = client.get(reverse("participant-home", args=[participant.token])).content.decode()
    assert 'name="assignment_id"' in home  # on to the next text


def test_a_stranger_or_another_participant_cannot_answer_someone_elses_check(client):
    study = make_checked_study(items_per_participant=2)
    owner, other = started(study), started(study)
    judge_current(client, owner)
    page = check_page(client, owner)
    answer_check(client, other, page, "banana")
    check = AttentionCheck.objects.get(participant=owner)
    assert check.answered_at is None
    response = client.post(
        reverse("participant-check", args=[owner.token]), {"check_id": "x<1>", "answer": "a"}
    )
    assert response.status_code == 302


def test_a_written_instruction_needs_its_answer_and_the_reverse():
    study = make_study(attention_checks=1, attention_check_prompt=OWN_PROMPT)
    with pytest.raises(ValidationError) as error:
        study.full_clean()
    assert "attention_check_answer" in error.value.message_dict
    study.attention_check_prompt, study.attention_check_answer = "", "blue"
    with pytest.raises(ValidationError):
        study.full_clean()


def test_the_study_form_offers_checks_for_intruder_tests(client):
    study = make_study()
    client.force_login(study.owner)
    page = client.get(reverse("researcher-study-edit", args=[study.slug])).content.decode()
    assert 'name="attention_checks"' in page and 'name="attention_check_prompt"' in page


def test_check_settings_are_fixed_once_participants_have_started():
    from intruder.services.studies import study_update

    study = make_checked_study()
    study_update(study=study, attention_checks=2)
    started(study)
    with pytest.raises(ValidationError) as error:
        study_update(study=study, attention_checks=0)
    assert "attention_checks" in error.value.message_dict
    study_update(study=study, title="Renamed", attention_checks=2)  # unchanged: fine

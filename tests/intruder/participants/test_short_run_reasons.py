"""Intruders who get fewer texts than announced (issue 40): the study page warns before
launch when the released texts and settings cannot give the announced number, and the
debrief says what really happened instead of "every other text has all its answers"."""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.models import Participant, PersonGroup, Study
from intruder.selectors.participant import (
    SHORT_FULL,
    SHORT_SAME_PERSON,
    SHORT_TOO_FEW,
    intruder_group_reach,
    intruder_short_run_reason,
)
from tests.intruder.factories import (
    logged_in,
    make_description,
    make_judgment,
    make_participant,
    make_study,
    make_target,
    make_text,
)
from tests.intruder.participants.test_intruder import current_assignment_id, enter

pytestmark = pytest.mark.django_db

FULL_ANSWERS = "Every other text already has all the answers it needs"


def _texts_about(study: Study, target, n: int) -> list:
    return [
        make_text(study=study, description=make_description(study=study, target=target))
        for _ in range(n)
    ]


def _intruder_study(**settings) -> Study:
    settings.setdefault("groups", [PersonGroup.FAMOUS])
    return make_study(kind=Study.Kind.INTRUDER, **settings)


def _judge_until_the_debrief(client, study, pid="SHORTRUN0001") -> str:
    home = enter(client, study, pid)
    client.post(f"{home}instructions/")
    for _ in range(study.items_per_participant + 1):
        page = client.get(home)
        if b'name="assignment_id"' not in page.content:
            # The debrief, seen once: showing its code completes the participant (issue 37).
            return page.content.decode()
        client.post(
            f"{home}judge/",
            {
                "assignment_id": current_assignment_id(page),
                "self_identified": "no",
                "other_knowledge": "x",
            },
        )
    raise AssertionError("no debrief after every announced text")


def test_the_walkthrough_case_is_warned_before_launch_and_explained_at_the_debrief(client):
    """Two texts about one person, two texts announced, one person per intruder."""
    study = _intruder_study(items_per_participant=2, judgments_per_text=3)
    _texts_about(study, make_target(study=study, group=PersonGroup.FAMOUS), 2)
    [reach] = intruder_group_reach(study=study)
    assert (reach.texts, reach.persons, reach.reachable, reach.short) == (2, 1, 1, True)

    researcher = logged_in(study.owner)
    for page in ("researcher-study", "researcher-study-edit"):
        html = researcher.get(reverse(page, args=[study.slug])).content.decode()
        assert 'id="reach-warning"' in html, page
        assert "group “famous”: at most 1 per intruder (2 released texts about 1 person" in html

    debrief = _judge_until_the_debrief(client, study)
    assert "You judged 1 of the 2 texts we announced" in debrief
    assert "about only 1 different person, and each person is shown to you once" in debrief
    assert FULL_ANSWERS not in debrief
    assert 'data-reason="too_few"' in debrief
    # Nothing about the person or the other texts leaks to the participant.
    assert study.targets.get().name not in debrief


def test_allowing_several_texts_about_a_person_lifts_the_warning():
    study = _intruder_study(items_per_participant=2, allow_same_target=True)
    _texts_about(study, make_target(study=study, group=PersonGroup.FAMOUS), 2)
    [reach] = intruder_group_reach(study=study)
    assert reach.reachable == 2 and not reach.short
    html = logged_in(study.owner).get(reverse("researcher-study", args=[study.slug]))
    assert 'id="reach-warning"' not in html.content.decode()


def test_only_released_texts_count_and_enough_persons_give_no_warning():
    study = _intruder_study(items_per_participant=2)
    for _ in range(2):
        _texts_about(study, make_target(study=study, group=PersonGroup.FAMOUS), 1)
    make_text(
        study=study,
        description=make_description(
            study=study, target=make_target(study=study, group=PersonGroup.FAMOUS)
        ),
        status="draft",
    )
    [reach] = intruder_group_reach(study=study)
    assert (reach.texts, reach.persons, reach.short) == (2, 2, False)
    html = logged_in(study.owner).get(reverse("researcher-study", args=[study.slug]))
    assert 'id="reach-warning"' not in html.content.decode()


def test_a_collection_study_is_never_warned():
    study = make_study(kind=Study.Kind.COLLECTION)
    html = logged_in(study.owner).get(reverse("researcher-study", args=[study.slug]))
    assert 'id="reach-warning"' not in html.content.decode()


def test_texts_left_only_about_seen_persons_are_named_as_the_reason(client):
    """Enough persons, but the one text still open is about the person the intruder saw."""
    study = _intruder_study(items_per_participant=2, judgments_per_text=1)
    anna = make_target(study=study, group=PersonGroup.FAMOUS)
    anna_texts = _texts_about(study, anna, 2)
    [bert_text] = _texts_about(study, make_target(study=study, group=PersonGroup.FAMOUS), 1)
    other = make_participant(study=study, group=PersonGroup.FAMOUS, status="completed")
    make_judgment(participant=other, text=bert_text)  # Bert's one slot is taken
    debrief = _judge_until_the_debrief(client, study)
    me = Participant.objects.get(prolific_pid="SHORTRUN0001")
    assert me.assignments.get().text in anna_texts
    assert intruder_short_run_reason(participant=me) == (SHORT_SAME_PERSON, 2)
    assert "You judged 1 of the 2 texts we announced" in debrief
    assert "about persons you have already seen" in debrief
    assert FULL_ANSWERS not in debrief


def test_filled_slots_keep_the_every_text_has_its_answers_message(client):
    study = _intruder_study(items_per_participant=2, judgments_per_text=1)
    texts = [
        _texts_about(study, make_target(study=study, group=PersonGroup.FAMOUS), 1)[0]
        for _ in range(2)
    ]
    other = make_participant(study=study, group=PersonGroup.FAMOUS, status="completed")
    make_judgment(participant=other, text=texts[0])
    debrief = _judge_until_the_debrief(client, study)
    me = Participant.objects.get(prolific_pid="SHORTRUN0001")
    assert intruder_short_run_reason(participant=me) == (SHORT_FULL, 2)
    assert "You judged 1 of the 2 texts we announced" in debrief and FULL_ANSWERS in debrief


def test_a_participant_of_a_group_without_texts_is_told_there_were_too_few():
    study = _intruder_study(items_per_participant=2, groups=[PersonGroup.FAMOUS, "fictitious"])
    _texts_about(study, make_target(study=study, group=PersonGroup.FAMOUS), 2)
    me = make_participant(study=study, group="fictitious")
    assert intruder_short_run_reason(participant=me) == (SHORT_TOO_FEW, 0)

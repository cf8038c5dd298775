"""The familiarity question: on the debrief only, after the last answer, about famous persons."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from intruder.models import FamiliarityAnswer, PersonGroup, Study
from tests.intruder.factories import (
    make_description,
    make_participant,
    make_study,
    make_target,
    make_text,
)
from tests.intruder.participants.test_intruder import current_assignment_id, enter

pytestmark = pytest.mark.django_db


def study_of(groups: dict[str, str], *, ask: bool = True) -> Study:
    study = make_study(
        kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2, ask_familiarity=ask
    )
    for name, group in groups.items():
        target = make_target(study=study, group=group, name=name)
        make_text(study=study, description=make_description(study=study, target=target))
    return study


MIXED = {
    "Oriel Vantassel": PersonGroup.FAMOUS,
    "Bram Oskarsen": PersonGroup.FAMOUS,
    "Hilde Quorm": PersonGroup.SEMIFAMOUS,
    "Tamsin Dovecote": PersonGroup.FICTITIOUS,
}


def judge_all(client, home: str, count: int = 2) -> list[bytes]:
    """Answer every text; return each page seen before its answer."""
    client.post(f"{home}instructions/")
    pages = []
    for _ in range(count):
        page = client.get(home)
        pages.append(page.content)
        if b'name="assignment_id"' not in page.content:
            break  # a short run: the pool of this intruder's group ran out
        client.post(
            f"{home}judge/",
            {
                "assignment_id": current_assignment_id(page),
                "client_ms": 900,
                "self_identified": "no",
                "other_knowledge": "A sailor.",
            },
        )
    return pages


def test_the_debrief_asks_about_famous_persons_only_after_the_last_answer(client):
    study = study_of(MIXED)
    home = enter(client, study)
    for page in [client.get(home).content, *judge_all(client, home)]:
        assert b'id="familiarity"' not in page  # never before the last answer is locked
    debrief = client.get(home).content.decode()
    assert 'id="familiarity"' in debrief
    assert "Oriel Vantassel" in debrief and "Bram Oskarsen" in debrief
    assert "Hilde Quorm" not in debrief and "Tamsin Dovecote" not in debrief
    oriel = study.targets.get(name="Oriel Vantassel")
    url = reverse("participant-familiarity", args=[home.rstrip("/").split("/")[-1]])
    saved = client.post(url, {"known": [oriel.pk]})
    assert saved.status_code == 200 and b"Your answer is saved" in saved.content
    answers = dict(FamiliarityAnswer.objects.values_list("target__name", "heard_of"))
    assert answers == {"Oriel Vantassel": True, "Bram Oskarsen": False}
    replay = client.post(url, {"known": []})
    assert replay.status_code == 409
    assert FamiliarityAnswer.objects.filter(heard_of=True).count() == 1
    assert b'id="familiarity"' not in client.get(home).content  # asked once


def test_a_participant_still_judging_or_another_study_cannot_post_answers(client):
    study = study_of(MIXED)
    home = enter(client, study)
    client.post(f"{home}instructions/")
    token = home.rstrip("/").split("/")[-1]
    url = reverse("participant-familiarity", args=[token])
    oriel = study.targets.get(name="Oriel Vantassel")
    assert client.post(url, {"known": [oriel.pk]}).status_code == 409  # mid-study: refused
    judge_all(client, home)
    client.get(home)  # the debrief
    other = study_of({"Piet Marsk": PersonGroup.FAMOUS})
    foreign = other.targets.get().pk
    assert client.post(url, {"known": [foreign]}).status_code == 409  # not on this list
    assert client.post(url, {"known": ["x"]}).status_code == 409
    assert not FamiliarityAnswer.objects.exists()
    assert client.post(url, {"known": [oriel.pk]}).status_code == 200


def test_no_question_without_the_setting_or_without_famous_persons():
    from django.test import Client

    private = {"Hilde Quorm": PersonGroup.SEMIFAMOUS, "Tamsin Dovecote": PersonGroup.FICTITIOUS}
    for n, (groups, ask) in enumerate([(MIXED, False), (private, True)]):
        study = study_of(groups, ask=ask)
        client = Client()
        home = enter(client, study, pid=f"INTRUDERPID{n:02d}")
        pages = [*judge_all(client, home), client.get(home).content]
        assert all(b'id="familiarity"' not in page for page in pages)
        url = reverse("participant-familiarity", args=[home.rstrip("/").split("/")[-1]])
        assert client.post(url, {"known": []}).status_code == 409
    assert not FamiliarityAnswer.objects.exists()


def test_the_setting_is_refused_for_a_study_of_private_or_invented_persons_only():
    study = make_study(kind=Study.Kind.INTRUDER, ask_familiarity=True, groups=["fictitious"])
    with pytest.raises(ValidationError, match="famous persons only"):
        study.full_clean()
    study.groups = ["famous", "fictitious"]
    study.full_clean()


def test_a_participant_who_timed_out_is_not_asked():
    study = study_of(MIXED)
    participant = make_participant(study=study, status="timed_out")
    from intruder.services.familiarity import familiarity_due

    assert not familiarity_due(participant)


def test_the_api_lists_answers_to_the_studys_own_researchers_only(client):
    from rest_framework.test import APIClient

    from tests.intruder.factories import make_user

    study = study_of(MIXED)
    home = enter(client, study)
    judge_all(client, home)
    client.get(home)
    oriel = study.targets.get(name="Oriel Vantassel")
    url = reverse("participant-familiarity", args=[home.rstrip("/").split("/")[-1]])
    client.post(url, {"known": [oriel.pk]})
    api = APIClient()
    api.force_authenticate(study.owner)
    rows = api.get("/api/familiarity-answers/", {"study": study.pk, "heard_of": "true"}).json()
    assert [(r["target_key"], r["heard_of"], r["simulated"]) for r in rows["results"]] == [
        (oriel.key, True, False)
    ]
    stranger = APIClient()
    stranger.force_authenticate(make_user())
    assert stranger.get("/api/familiarity-answers/").json()["count"] == 0

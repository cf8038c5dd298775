"""The familiarity question: on the debrief only, after the last answer, about the famous persons
an intruder judged among decoys, saved by the one Finish button."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError

from intruder.models import (
    FamiliarityAnswer,
    FamiliarityDecoyAnswer,
    Judgment,
    PersonGroup,
    Study,
)
from intruder.services.familiarity import (
    MIN_DECOYS,
    FamiliarityRefused,
    familiarity_record,
    study_decoys,
)
from tests.intruder.factories import (
    make_description,
    make_participant,
    make_study,
    make_target,
    make_text,
)
from tests.intruder.participants.test_intruder import current_assignment_id, enter

pytestmark = pytest.mark.django_db


def study_of(groups: dict[str, str], *, ask: bool = True, items: int = 2) -> Study:
    study = make_study(
        kind=Study.Kind.INTRUDER,
        items_per_participant=items,
        judgments_per_text=2,
        ask_familiarity=ask,
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

FAMOUS = {"Oriel Vantassel": PersonGroup.FAMOUS, "Bram Oskarsen": PersonGroup.FAMOUS}


def judge_all(client, home: str, count: int = 4) -> list[bytes]:
    """Answer every text; return each page seen before its answer."""
    client.post(f"{home}instructions/")
    pages = []
    for _ in range(count):
        page = client.get(home)
        if b'name="assignment_id"' not in page.content:
            break  # the debrief: every text judged, or a short run
        pages.append(page.content)
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


def token_of(home: str) -> str:
    return home.rstrip("/").split("/")[-1]


def listed(debrief: str) -> list[str]:
    """Return the names on the familiarity list, in the order shown (the posted places)."""
    form = debrief[debrief.index('id="familiarity"') : debrief.index("</fieldset>")]
    return re.findall(r'name="known" value="\d+"[^>]*> ([^<]+?)</label>', form)


def finish(client, home: str, **answer) -> object:
    return client.post(f"{home}finish/", answer)


def test_the_debrief_asks_about_judged_famous_persons_only_after_the_last_answer(client):
    study = study_of(MIXED, items=4)
    home = enter(client, study)
    for page in [client.get(home).content, *judge_all(client, home)]:
        assert b'id="familiarity"' not in page  # never before the last answer is locked
    debrief = client.get(home).content.decode()
    names = listed(debrief)
    assert "Hilde Quorm" not in debrief and "Tamsin Dovecote" not in debrief
    judged = set(
        Judgment.objects.filter(participant__prolific_pid="INTRUDERPID01").values_list(
            "text__description__target__name", flat=True
        )
    )
    famous = judged & {"Oriel Vantassel", "Bram Oskarsen"}
    assert famous and famous <= set(names)
    # Decoys: at least three, none a study person; alphabetical, so place tells nothing.
    decoys = [n for n in names if n not in famous]
    assert len(decoys) >= max(MIN_DECOYS, len(famous))
    assert not set(decoys) & {t.name for t in study.targets.all()}
    assert names == sorted(names, key=str.casefold)
    # Boxes are posted by place, so the page's source tells no decoy from a study person.
    values = re.findall(r'name="known" value="(\d+)"', debrief)
    assert values == [str(place) for place in range(len(names))]
    # Finish saves what is ticked (one form, one button) and goes to Prolific.
    first = names.index(sorted(famous)[0])
    decoy = names.index(decoys[0])
    done = finish(client, home, known=[first, decoy])
    assert done.status_code == 302 and "prolific" in done["Location"]
    answers = dict(FamiliarityAnswer.objects.values_list("target__name", "heard_of"))
    assert answers == {name: name == sorted(famous)[0] for name in famous}
    decoy_answers = dict(FamiliarityDecoyAnswer.objects.values_list("name", "heard_of"))
    assert decoy_answers == {name: name == decoys[0] for name in decoys}
    replay = finish(client, home, known=[decoy])  # asked once: a replay changes nothing
    assert replay.status_code == 302
    assert FamiliarityDecoyAnswer.objects.filter(heard_of=True).count() == 1
    assert b'id="familiarity"' not in client.get(home).content


def test_the_list_is_the_same_on_reload_and_differs_between_participants(client):
    from django.test import Client

    study = study_of({f"Famous Person {n}": PersonGroup.FAMOUS for n in "ABCDEF"}, items=1)
    home = enter(client, study)
    judge_all(client, home)
    first = listed(client.get(home).content.decode())
    assert listed(client.get(home).content.decode()) == first
    others = set()
    for n in range(2, 8):
        other = Client()
        other_home = enter(other, study, pid=f"INTRUDERPID{n:02d}")
        judge_all(other, other_home)
        debrief = other.get(other_home).content.decode()
        if 'id="familiarity"' in debrief:
            others.add(tuple(listed(debrief)))
    assert others and any(names != tuple(first) for names in others)


def test_none_of_these_is_an_answer_and_a_contradiction_comes_back_kept(client):
    study = study_of(FAMOUS)
    home = enter(client, study)
    judge_all(client, home)
    names = listed(client.get(home).content.decode())
    back = finish(client, home, known=[0], none_of_these="1")
    assert back.status_code == 302 and back["Location"].endswith(home.split("testserver")[-1])
    page = client.get(home).content.decode()
    assert "choose one or the other" in page and 'id="familiarity-error"' in page
    # Shown again after completing: it counts the texts judged (it once said "0 of 2").
    assert 'id="short-run"' not in page
    assert 'value="0" checked' in page  # what was ticked is kept
    assert not FamiliarityAnswer.objects.exists()
    assert finish(client, home, none_of_these="1").status_code == 302
    assert not FamiliarityAnswer.objects.filter(heard_of=True).exists()
    total = FamiliarityAnswer.objects.count() + FamiliarityDecoyAnswer.objects.count()
    assert total == len(names)


def test_finishing_with_nothing_ticked_stores_no_answer_and_still_completes(client):
    study = study_of(FAMOUS)
    home = enter(client, study)
    judge_all(client, home)
    client.get(home)
    done = finish(client, home)
    assert done.status_code == 302 and "prolific" in done["Location"]
    assert not FamiliarityAnswer.objects.exists()
    participant = study.participants.get()
    assert participant.status == participant.Status.COMPLETED


def test_a_participant_still_judging_cannot_answer_and_forged_places_are_refused(client):
    study = study_of(FAMOUS)
    home = enter(client, study)
    client.post(f"{home}instructions/")
    participant = study.participants.get()
    with pytest.raises(FamiliarityRefused):  # mid-study: not open
        familiarity_record(participant=participant, ticked={0})
    finish(client, home, known=[0])  # a stale finish while judging changes nothing
    assert not FamiliarityAnswer.objects.exists()
    judge_all(client, home)
    names = listed(client.get(home).content.decode())
    for forged in ([len(names)], [-1], ["x"], [str(study.targets.first().pk * 1000)]):
        finish(client, home, known=forged)
        assert not FamiliarityAnswer.objects.exists()
        assert "familiarity-error" in client.get(home).content.decode()
    finish(client, home, known=[0])
    assert FamiliarityAnswer.objects.count() + FamiliarityDecoyAnswer.objects.count() == len(names)


def test_decoys_never_read_as_a_study_person():
    study = study_of({"Tom Hanks": PersonGroup.FAMOUS, "Oriel Vantassel": PersonGroup.FAMOUS})
    assert "Tom Hanks" not in study_decoys(study)
    study.familiarity_decoys = "Tom Hank\nPiet Marsk\n\npiet marsk\nOriel Vantasel"
    assert study_decoys(study) == ["Piet Marsk"]  # near-matches and repeats dropped


def test_no_question_without_the_setting_or_without_famous_persons():
    from django.test import Client

    private = {"Hilde Quorm": PersonGroup.SEMIFAMOUS, "Tamsin Dovecote": PersonGroup.FICTITIOUS}
    for n, (groups, ask) in enumerate([(MIXED, False), (private, True)]):
        study = study_of(groups, ask=ask)
        client = Client()
        home = enter(client, study, pid=f"INTRUDERPID{n:02d}")
        pages = [*judge_all(client, home), client.get(home).content]
        assert all(b'id="familiarity"' not in page for page in pages)
        assert finish(client, home, known=[0]).status_code == 302
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

    study = study_of(FAMOUS)
    home = enter(client, study)
    judge_all(client, home)
    client.get(home)
    names = listed(client.get(home).content.decode())
    judged = [n for n in names if n in {"Oriel Vantassel", "Bram Oskarsen"}]
    finish(client, home, known=[names.index(judged[0])])
    ticked = study.targets.get(name=judged[0])
    api = APIClient()
    api.force_authenticate(study.owner)
    rows = api.get("/api/familiarity-answers/", {"study": study.pk, "heard_of": "true"}).json()
    assert [(r["target_key"], r["heard_of"], r["simulated"]) for r in rows["results"]] == [
        (ticked.key, True, False)
    ]
    stranger = APIClient()
    stranger.force_authenticate(make_user())
    assert stranger.get("/api/familiarity-answers/").json()["count"] == 0


def test_a_catch_trial_in_a_famous_only_study_is_never_on_the_list(client):
    from intruder.evidence.catch_trials import catch_trial_add

    study = study_of(FAMOUS, items=3)
    study.groups = ["famous"]
    study.save()
    catch = catch_trial_add(study=study, text="A made-up baker from a made-up town.")
    home = enter(client, study)
    judge_all(client, home, count=3)
    judged = set(
        Judgment.objects.filter(participant__study=study).values_list(
            "text__description__target__name", flat=True
        )
    )
    assert catch.description.target.name in judged  # the catch trial was served and judged
    names = listed(client.get(home).content.decode())
    assert catch.description.target.name not in names
    assert {"Oriel Vantassel", "Bram Oskarsen"} <= set(names)

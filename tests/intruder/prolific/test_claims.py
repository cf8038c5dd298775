"""A Prolific study ID belongs to the study (and account) that claimed it (issue 47).

The token opens the whole workspace, so Prolific confirming an ID says nothing about who on
the platform may run it. The attacker is a logged-in researcher with no role anywhere who
types a workspace study's ID into a study of their own: a study made on Prolific directly
(no platform study holds it), one whose owner cleared the ID, one whose owner changed it.
Each attack must leave the victim's Prolific study untouched: no sync, transition, review,
and no webhook effect on the attacker's study.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from intruder.models import Study
from intruder.prolific import claims
from intruder.prolific.claims import CLAIMED_ELSEWHERE, claim_approve, claim_refuse
from intruder.prolific.models import ProlificStudyClaim, ProlificStudyState
from intruder.prolific.services import study_draft_create
from intruder.prolific.webhooks import _study_for
from intruder.services.studies import study_create, study_update
from tests.intruder.factories import logged_in, make_participant, make_study, make_user

pytestmark = pytest.mark.django_db

DRAFT = {
    "name": "n",
    "description": "d",
    "external_study_url": "https://x/?{{%PROLIFIC_PID%}}{{%STUDY_ID%}}{{%SESSION_ID%}}",
    "completion_codes": [{"code": "C"}],
    "total_available_places": 1,
    "reward": 1,
    "estimated_completion_time": 1,
}


def _made_on_prolific(fake) -> str:
    """A study of the workspace made on Prolific's own site: no platform study holds it."""
    return fake._study_create(DRAFT)[1]["id"]


def _draft(study: Study, client) -> str:
    study_draft_create(
        study=study,
        client=client,
        entry_url=f"https://x.example/s/{study.slug}/",
        places=5,
        reward_minor=100,
        estimated_minutes=5,
        user=study.owner,
    )
    study.refresh_from_db()
    return study.prolific_study_id


def _admin():
    return make_user(is_staff=True)


def _attacker_effects(attacker_study: Study, fake, prolific_id: str) -> list:
    """Try every Prolific action from the attacker's own study; return Prolific's calls."""
    before = len(fake.calls)
    client = logged_in(attacker_study.owner)
    for name, data in (
        ("researcher-prolific-sync", {}),
        ("researcher-prolific-transition", {"action": "pause"}),
        ("researcher-prolific-review", {"pid": ["PIDV"], "kind": "approve"}),
    ):
        client.post(reverse(name, kwargs={"slug": attacker_study.slug}), data)
    return [c for c in fake.calls[before:] if prolific_id in str(c)]


def test_the_draft_made_here_is_claimed_by_its_account(prolific_settings, client_for):
    study = make_study(slug="mine")
    prolific_id = _draft(study, client_for())
    claim = ProlificStudyClaim.objects.get(prolific_study_id=prolific_id)
    assert claim.approved and claim.study == study and claim.claimed_by == study.owner
    assert claim.via == ProlificStudyClaim.Via.DRAFT


def test_an_unlinked_workspace_study_typed_in_by_another_account_waits_for_an_admin(
    prolific_settings, fake_prolific
):
    prolific_id = _made_on_prolific(fake_prolific)
    fake_prolific.studies[prolific_id]["status"] = "ACTIVE"
    attacker = make_user(username="attacker")
    own = make_study(owner=attacker, slug="mine")
    page = logged_in(attacker).post(
        reverse("researcher-study-edit", kwargs={"slug": own.slug}),
        {**_form(own), "prolific_study_id": prolific_id},
    )
    assert page.status_code == 302
    own.refresh_from_db()
    assert own.prolific_study_id == ""  # asked for, not held
    assert ProlificStudyClaim.objects.get(prolific_study_id=prolific_id).approved_at is None
    assert _study_for(prolific_id) is None  # its webhooks reach no study
    assert _attacker_effects(own, fake_prolific, prolific_id) == []
    assert fake_prolific.studies[prolific_id]["status"] == "ACTIVE"
    page = logged_in(attacker).get(reverse("researcher-prolific", kwargs={"slug": own.slug}))
    assert 'data-testid="claim-pending"' in page.content.decode()
    # The API asks the same way and holds nothing either.
    api = APIClient()
    api.force_authenticate(attacker)
    answer = api.patch(f"/api/studies/{own.pk}/update/", {"prolific_study_id": prolific_id})
    assert answer.status_code == 200 and answer.json()["prolific_study_id"] == ""


def test_only_a_site_admin_approves_and_the_other_requests_are_refused(
    prolific_settings, fake_prolific
):
    prolific_id = _made_on_prolific(fake_prolific)
    honest = make_study(slug="honest")
    attacker_study = make_study(slug="attacker")
    for study in (honest, attacker_study):
        study_update(study=study, prolific_study_id=prolific_id)
    honest_claim = ProlificStudyClaim.objects.get(study=honest)
    with pytest.raises(ValidationError, match="site administrator"):
        claim_approve(claim=honest_claim, by=honest.owner)  # not an administrator
    attacker_claim = ProlificStudyClaim.objects.get(study=attacker_study)
    claim_approve(claim=honest_claim, by=_admin())
    honest.refresh_from_db()
    assert honest.prolific_study_id == prolific_id
    assert not ProlificStudyClaim.objects.filter(study=attacker_study).exists()
    # A second admin tab approving the other request (refused with the first) is told so.
    with pytest.raises(ValidationError, match="claimed by another study"):
        claim_approve(claim=attacker_claim, by=_admin())
    with pytest.raises(ValidationError, match="Another study already has"):
        study_update(study=attacker_study, prolific_study_id=prolific_id)
    assert _study_for(prolific_id) == honest


def test_a_cleared_id_stays_reserved_for_its_owner(prolific_settings, fake_prolific, client_for):
    victim = make_study(slug="victim")
    prolific_id = _draft(victim, client_for())
    study_update(study=victim, prolific_study_id="")  # a draft, no participants: allowed
    attacker_study = make_study(slug="attacker")
    with pytest.raises(ValidationError, match="claimed by another study"):
        study_update(study=attacker_study, prolific_study_id=prolific_id)
    page = logged_in(attacker_study.owner).post(
        reverse("researcher-study-edit", kwargs={"slug": attacker_study.slug}),
        {**_form(attacker_study), "prolific_study_id": prolific_id},
    )
    assert page.status_code == 200 and "claimed by another study" in page.content.decode()
    assert not ProlificStudyClaim.objects.filter(study=attacker_study).exists()
    assert _attacker_effects(attacker_study, fake_prolific, prolific_id) == []
    # The owner takes it back at once, or moves it to another study of theirs.
    study_update(study=victim, prolific_study_id=prolific_id)
    assert Study.objects.get(pk=victim.pk).prolific_study_id == prolific_id
    study_update(study=victim, prolific_study_id="")
    wave = make_study(owner=victim.owner, slug="victim-2")
    study_update(study=wave, prolific_study_id=prolific_id)
    assert Study.objects.get(pk=wave.pk).prolific_study_id == prolific_id
    assert ProlificStudyClaim.objects.get(prolific_study_id=prolific_id).study == wave


def test_a_published_or_started_studys_id_cannot_change_or_be_cleared(
    prolific_settings, fake_prolific, client_for
):
    victim = make_study(slug="victim")
    prolific_id = _draft(victim, client_for())
    ProlificStudyState.objects.filter(study=victim).update(status="ACTIVE")
    other = _made_on_prolific(fake_prolific)
    for new in ("", other):
        with pytest.raises(ValidationError, match="cannot change: the Prolific study has been"):
            study_update(study=victim, prolific_study_id=new)
    ProlificStudyState.objects.filter(study=victim).update(status="UNPUBLISHED")
    make_participant(study=victim, prolific_pid="PIDV")
    with pytest.raises(ValidationError, match="participants have started"):
        study_update(study=victim, prolific_study_id="")
    victim.refresh_from_db()
    assert victim.prolific_study_id == prolific_id
    # Its own unchanged ID is accepted by the service and the API alike.
    study_update(study=victim, prolific_study_id=prolific_id, title="Renamed")
    api = APIClient()
    api.force_authenticate(victim.owner)
    answer = api.patch(
        f"/api/studies/{victim.pk}/update/",
        {"prolific_study_id": prolific_id, "title": "Renamed again"},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["prolific_study_id"] == prolific_id


def test_a_changed_id_keeps_the_old_one_reserved(prolific_settings, fake_prolific, client_for):
    """An owner who changes an unpublished study's ID keeps the old claim: nobody else may
    take the old ID, whose Prolific study may still be published later."""
    victim = make_study(slug="victim")
    old = _draft(victim, client_for())
    new = _made_on_prolific(fake_prolific)
    study_update(study=victim, prolific_study_id="")
    study_update(study=victim, prolific_study_id=new)  # asked for; an admin approves
    claim_approve(claim=ProlificStudyClaim.objects.get(prolific_study_id=new), by=_admin())
    victim.refresh_from_db()
    assert victim.prolific_study_id == new
    attacker_study = make_study(slug="attacker")
    with pytest.raises(ValidationError, match="claimed by another study"):
        study_update(study=attacker_study, prolific_study_id=old)
    with pytest.raises(ValidationError, match="claimed by another study"):
        study_create(
            owner=attacker_study.owner, slug="fresh", title="t", kind="intruder",
            prolific_study_id=old,
        )  # fmt: skip
    assert not Study.objects.filter(slug="fresh").exists()


def test_an_admin_cannot_give_an_owned_id_to_a_second_study(prolific_settings, client_for):
    victim = make_study(slug="victim")
    prolific_id = _draft(victim, client_for())
    attacker_study = make_study(slug="attacker")
    forged = ProlificStudyClaim.objects.create(
        prolific_study_id=prolific_id, study=attacker_study, via=ProlificStudyClaim.Via.MANUAL
    )
    with pytest.raises(ValidationError, match="claimed by another study"):
        claim_approve(claim=forged, by=_admin())
    claim_refuse(claim=forged, by=_admin())
    assert not ProlificStudyClaim.objects.filter(pk=forged.pk).exists()


def test_two_approvals_at_once_give_one_owner(prolific_settings, fake_prolific, monkeypatch):
    """Both requests pass the checks before either commits; the database keeps one owner."""
    prolific_id = _made_on_prolific(fake_prolific)
    first, second = make_study(slug="first"), make_study(slug="second")
    for study in (first, second):
        study_update(study=study, prolific_study_id=prolific_id)
    claim_approve(claim=ProlificStudyClaim.objects.get(study=first), by=_admin())
    # The second approval's checks ran before the first committed:
    monkeypatch.setattr(claims, "approved_claim", lambda _id: None)
    Study.objects.filter(pk=first.pk).update(prolific_study_id="")  # so the field passes too
    late = ProlificStudyClaim.objects.create(
        prolific_study_id=prolific_id, study=second, via=ProlificStudyClaim.Via.MANUAL
    )
    with pytest.raises(ValidationError, match="claimed by another study"):
        claim_approve(claim=late, by=_admin())
    assert ProlificStudyClaim.objects.filter(approved_at__isnull=False).count() == 1
    assert Study.objects.get(pk=second.pk).prolific_study_id == ""
    with pytest.raises(IntegrityError), transaction.atomic():
        ProlificStudyClaim.objects.filter(pk=late.pk).update(approved_at=timezone.now())


def test_clone_and_claim_messages_name_no_other_study(prolific_settings, client_for):
    victim = make_study(slug="victim-secret-name")
    prolific_id = _draft(victim, client_for())
    study_update(study=victim, prolific_study_id="")
    attacker_study = make_study(slug="attacker")
    with pytest.raises(ValidationError) as refused:
        study_update(study=attacker_study, prolific_study_id=prolific_id)
    assert "victim" not in str(refused.value) and CLAIMED_ELSEWHERE in str(refused.value)


def _form(study: Study) -> dict:
    from tests.intruder.factories import STUDY_FORM

    data = {**STUDY_FORM, "title": study.title}
    data.pop("slug")
    return data

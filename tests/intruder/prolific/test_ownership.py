"""One study per Prolific study ID, checked with Prolific (issue 37, finding 1).

The attacker is a logged-in researcher with no role on study A who knows A's Prolific study
ID (it is in every participant's link) and tries to act on A's Prolific study from a study
of their own, or on A's pages directly. The honest researcher enters their own study's ID.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from rest_framework.test import APIClient

from intruder.models import Study, StudyMember
from intruder.prolific.claims import claim_approve
from intruder.prolific.models import ProlificAction, ProlificStudyClaim, ProlificStudyState
from intruder.prolific.services import study_draft_create
from intruder.prolific.webhooks import _study_for
from intruder.services.studies import study_clone, study_update
from tests.intruder.factories import STUDY_FORM, logged_in, make_study, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def victim(prolific_settings, client_for) -> Study:
    """Study A, with a Prolific draft its owner created (so the ID is A's, on Prolific too)."""
    study = make_study(slug="victim")
    study_draft_create(
        study=study,
        client=client_for(),
        entry_url="https://x.example/s/victim/",
        places=5,
        reward_minor=100,
        estimated_minutes=5,
    )
    study.refresh_from_db()
    return study


def _edit_form(study: Study, **changes) -> dict:
    data = {**STUDY_FORM, "title": study.title, **changes}
    data.pop("slug")
    return data


def test_another_account_cannot_take_a_prolific_study_id_by_page_api_or_service(
    victim, fake_prolific
):
    attacker = make_user(username="attacker")
    own = make_study(owner=attacker, slug="mine")
    page = logged_in(attacker).post(
        reverse("researcher-study-edit", kwargs={"slug": own.slug}),
        _edit_form(own, prolific_study_id=victim.prolific_study_id),
    )
    assert page.status_code == 200  # the form again, with the error
    assert "Another study already has this Prolific study ID" in page.content.decode()
    api = APIClient()
    api.force_authenticate(attacker)
    patched = api.patch(
        f"/api/studies/{own.pk}/update/",
        {"prolific_study_id": victim.prolific_study_id},
        format="json",
    )
    assert patched.status_code == 400 and "prolific_study_id" in patched.json()
    with pytest.raises(ValidationError):
        study_update(study=own, prolific_study_id=victim.prolific_study_id)
    own.refresh_from_db()
    assert own.prolific_study_id == ""
    # The database holds the line even for code that skips validation.
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.filter(pk=own.pk).update(prolific_study_id=victim.prolific_study_id)
    assert _study_for(victim.prolific_study_id) == victim


def test_an_id_prolific_does_not_confirm_for_this_workspace_is_refused(
    prolific_settings, fake_prolific
):
    study = make_study()
    foreign = fake_prolific.study_add_foreign(name="someone else's study")
    for wrong in (foreign, "0123456789abcdef01234567"):  # another workspace's; unknown
        with pytest.raises(ValidationError, match="in this token's workspace"):
            study_update(study=study, prolific_study_id=wrong)
    fake_prolific.fail_next(503, times=2)  # Prolific down: not stored unchecked
    own = fake_prolific._study_create(
        {
            "name": "n",
            "description": "d",
            "external_study_url": "https://x/?{{%PROLIFIC_PID%}}{{%STUDY_ID%}}{{%SESSION_ID%}}",
            "completion_codes": [{"code": "C"}],
            "total_available_places": 1,
            "reward": 1,
            "estimated_completion_time": 1,
        }
    )[1]["id"]
    with pytest.raises(ValidationError, match="could not confirm"):
        study_update(study=study, prolific_study_id=own)
    study.refresh_from_db()
    assert study.prolific_study_id == ""
    # The honest researcher's own study is asked for; a site administrator approves it.
    study_update(study=study, prolific_study_id=own)
    study.refresh_from_db()
    assert study.prolific_study_id == ""  # not held before approval (the token opens all)
    claim = ProlificStudyClaim.objects.get(study=study, prolific_study_id=own)
    claim_approve(claim=claim, by=make_user(username="site-admin", is_staff=True))
    study.refresh_from_db()
    assert study.prolific_study_id == own


def test_the_workspace_in_prolifics_answer_must_be_this_one(prolific_settings, fake_prolific):
    study = make_study()
    other = fake_prolific.study_add_foreign()
    # A token that sees several workspaces still stores only the configured one's studies.
    fake_prolific.studies[other]["workspace"] = fake_prolific.workspace_id
    prolific_settings.PROLIFIC_WORKSPACE_ID = "another-workspace"
    with pytest.raises(ValidationError, match="another workspace"):
        study_update(study=study, prolific_study_id=other)


def test_without_a_token_ids_are_still_one_per_study(settings):
    settings.PROLIFIC_API_TOKEN = ""
    make_study(prolific_study_id="64f0c0ffee0000000000beef")
    other = make_study()
    with pytest.raises(ValidationError, match="Another study already has"):
        study_update(study=other, prolific_study_id="64f0c0ffee0000000000beef")


def test_a_clone_is_a_new_wave_without_the_prolific_study(victim):
    clone = study_clone(study=victim, owner=victim.owner, slug="wave-2", title="Wave 2")
    assert clone.prolific_study_id == ""


ACTIONS = [
    ("researcher-prolific-transition", {"action": "pause"}),
    ("researcher-prolific-sync", {}),
    ("researcher-prolific-review", {"pid": ["PIDA"], "kind": "approve"}),
    ("researcher-prolific-bonus", {"per_identified": "1.00", "label": "x"}),
    ("researcher-prolific-draft", {"places": 1, "reward_minor": 1, "estimated_minutes": 1}),
]


@pytest.mark.parametrize(("name", "data"), ACTIONS)
def test_no_prolific_action_reaches_a_study_without_a_role_on_it(victim, fake_prolific, name, data):
    """Strangers get 404 and viewers 403 on every action: Prolific is never called."""
    sub = fake_prolific.submission_start(victim.prolific_study_id, "PIDA")
    fake_prolific.submission_set_status(sub, "AWAITING REVIEW")
    viewer = make_user(username="viewer")
    StudyMember.objects.create(study=victim, user=viewer, role=StudyMember.Role.VIEWER)
    before = list(fake_prolific.calls)
    for user, expected in ((make_user(username="stranger"), 404), (viewer, 403)):
        response = logged_in(user).post(reverse(name, kwargs={"slug": victim.slug}), data)
        assert response.status_code == expected
    bulk = logged_in(viewer).post(
        reverse("researcher-prolific-bulk", kwargs={"slug": victim.slug, "rule": "approve-clean"}),
        {"pid": ["PIDA"]},
    )
    assert bulk.status_code == 403
    assert fake_prolific.calls == before
    assert fake_prolific.studies[victim.prolific_study_id]["status"] == "UNPUBLISHED"
    assert not ProlificAction.objects.exists()
    assert ProlificStudyState.objects.get(study=victim).status == "UNPUBLISHED"


def test_a_concurrent_save_of_the_same_id_is_a_validation_error_not_a_500(settings, monkeypatch):
    """Two accounts saving one ID at once both pass validation; the database refuses the
    second, and the service says so in words."""
    settings.PROLIFIC_API_TOKEN = ""
    make_study(prolific_study_id="64f0c0ffee0000000000abcd")
    other = make_study()
    monkeypatch.setattr(Study, "validate_constraints", lambda self, exclude=None: None)
    with pytest.raises(ValidationError, match="Another study already has"):
        study_update(study=other, prolific_study_id="64f0c0ffee0000000000abcd")
    assert Study.objects.get(pk=other.pk).prolific_study_id == ""

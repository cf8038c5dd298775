"""Every Prolific action that spends money or changes what participants see is previewed and
confirmed (issue 37, finding 5): the exact request, the API base, totals with the currency,
the device rules; only the transitions Prolific allows; Prolific's answers as text."""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from intruder.models import Participant, PersonGroup
from intruder.prolific.models import ProlificAction, ProlificSubmission
from intruder.prolific.services import study_draft_create, study_transition
from tests.intruder.factories import (
    logged_in,
    make_judgment,
    make_participant,
    make_study,
    make_texts,
)

pytestmark = pytest.mark.django_db

DRAFT = {
    "name": "Who is it?",
    "description": "Read three short texts about people and tell us whom you recognise.",
    "places": 25,
    "reward_minor": 120,
    "estimated_minutes": 10,
    "completion_action": "MANUALLY_REVIEW",
    "devices": ["desktop", "tablet"],
}


def _url(study, name: str) -> str:
    return reverse(name, kwargs={"slug": study.slug})


def _digest(response) -> str:
    return re.search(r'name="confirm" value="([0-9a-f]{64})"', response.content.decode())[1]


def test_the_draft_preview_shows_the_exact_request_and_sends_nothing_until_confirmed(
    prolific_settings, fake_prolific
):
    study = make_study(title="Internal: wave 3 pilot")
    client = logged_in(study.owner)
    preview = client.post(_url(study, "researcher-prolific-draft"), DRAFT)
    page = html.unescape(preview.content.decode())
    assert fake_prolific.calls == [] and fake_prolific.studies == {}
    assert f"POST {fake_prolific.base_url}studies/" in page
    assert "Who is it?" in page and "tell us whom you recognise" in page
    assert "GBP 1.20 (120 pence)" in page and "GBP 30.00 (3000 pence)" in page
    assert "desktop, tablet" in page and '"device_compatibility"' in page
    assert 'data-testid="prolific-sandbox"' in page  # the fake is on loopback
    assert fake_prolific.token not in page
    client.post(_url(study, "researcher-prolific-draft"), {**DRAFT, "confirm": _digest(preview)})
    remote = next(iter(fake_prolific.studies.values()))
    assert remote["name"] == "Who is it?" and remote["description"] == DRAFT["description"]
    assert remote["device_compatibility"] == ["desktop", "tablet"]
    assert "Internal" not in remote["name"] + remote["description"]


def test_a_draft_without_a_name_or_description_is_refused(prolific_settings, fake_prolific):
    study = make_study()
    client = logged_in(study.owner)
    for missing in ("name", "description", "devices"):
        data = {k: v for k, v in DRAFT.items() if k != missing}
        response = client.post(_url(study, "researcher-prolific-draft"), data, follow=True)
        assert "Check the draft" in response.content.decode()
    assert fake_prolific.calls == []


def test_a_forged_or_stale_confirmation_sends_nothing(prolific_settings, fake_prolific, client_for):
    study = make_study(items_per_participant=1, judgments_per_text=2)
    make_texts(study=study, count=2, group=PersonGroup.FAMOUS)
    study_draft_create(
        study=study,
        client=client_for(),
        entry_url="https://x.example/s/p/",
        places=5,
        reward_minor=100,
        estimated_minutes=5,
    )
    study.refresh_from_db()
    texts = [d.anonymizations.get() for d in study.descriptions.all()]

    def identifier(pid: str, slot: int) -> None:
        p = make_participant(
            study=study,
            prolific_pid=pid,
            group=PersonGroup.FAMOUS,
            status=Participant.Status.COMPLETED,
            completed_at=timezone.now(),
        )
        make_judgment(participant=p, text=texts[0], slot=slot, identified=True)
        ProlificSubmission.objects.create(  # a submission of the study: paid by default
            study=study,
            submission_id=fake_prolific.submission_start(study.prolific_study_id, pid),
            prolific_pid=pid,
            status="AWAITING REVIEW",
            status_at=timezone.now(),
        )

    identifier("PIDONE", 1)
    client = logged_in(study.owner)
    url = _url(study, "researcher-prolific-bonus")
    bonus = {"per_identified": "0.50", "label": "id"}
    preview = client.post(url, bonus)
    assert "GBP 0.50, before Prolific" in preview.content.decode()
    forged = client.post(url, {**bonus, "confirm": "0" * 64})
    assert 'data-testid="plan-changed"' in forged.content.decode()
    identifier("PIDTWO", 2)  # the amounts change after the preview
    stale = client.post(url, {**bonus, "confirm": _digest(preview)})
    assert 'data-testid="plan-changed"' in stale.content.decode()
    assert "GBP 1.00, before Prolific" in stale.content.decode()
    assert fake_prolific.payments == [] and not ProlificAction.objects.exists()
    # A bonus amount that is no amount never gets a preview.
    for per in ("NaN", "Infinity", "-1", "0", "5000"):
        response = client.post(url, {**bonus, "per_identified": per}, follow=True)
        assert response.status_code == 200 and 'name="confirm"' not in response.content.decode()
    client.post(url, {**bonus, "confirm": _digest(stale)})
    assert sorted(fake_prolific.payments) == [
        (study.prolific_study_id, "PIDONE", 0.5),
        (study.prolific_study_id, "PIDTWO", 0.5),
    ]


def test_only_the_transitions_prolific_allows_are_offered_or_sent(
    prolific_settings, fake_prolific, client_for
):
    study = make_study()
    prolific = client_for()
    study_draft_create(
        study=study,
        client=prolific,
        entry_url="https://x.example/s/t/",
        places=5,
        reward_minor=100,
        estimated_minutes=5,
    )
    study.refresh_from_db()
    client = logged_in(study.owner)
    page = client.get(_url(study, "researcher-prolific")).content.decode()
    offered = re.findall(r'name="action" value="(\w+)"', page)
    assert offered == ["publish"]
    url = _url(study, "researcher-prolific-transition")
    before = list(fake_prolific.calls)
    for forged in ("pause", "resume", "stop", "explode"):
        response = client.post(url, {"action": forged}, follow=True)
        assert "does not allow" in response.content.decode()
    assert fake_prolific.calls == before
    study_transition(study=study, client=prolific, action="publish")
    page = client.get(_url(study, "researcher-prolific")).content.decode()
    assert re.findall(r'name="action" value="(\w+)"', page) == ["pause", "stop"]
    preview = client.post(url, {"action": "stop"}).content.decode()
    assert "cannot be resumed" in preview and "GBP" not in preview.split("plan-requests")[1]
    assert fake_prolific.studies[study.prolific_study_id]["status"] == "ACTIVE"


def test_the_page_names_the_real_api_base_and_answers_read_as_text(settings, fake_prolific):
    settings.PROLIFIC_API_TOKEN = "token-for-the-page-only"
    settings.PROLIFIC_API_URL = "https://api.prolific.com/api/v1/"
    study = make_study(prolific_study_id="64f0c0ffee0000000000d00d")
    ProlificAction.objects.create(
        study=study,
        key="k1",
        kind="bonus",
        prolific_pid="PIDA",
        amount=Decimal("0.50"),
        status="failed",
        response={"error": {"detail": {"csv_bonuses": ["Participant not in study."]}}},
    )
    page = logged_in(study.owner).get(_url(study, "researcher-prolific")).content.decode()
    assert 'data-testid="prolific-api-base"' in page and "https://api.prolific.com/api/v1/" in page
    assert 'data-testid="prolific-sandbox"' not in page
    assert "csv_bonuses: Participant not in study." in page
    assert "{&#x27;" not in page and "{'" not in page
    assert "token-for-the-page-only" not in page

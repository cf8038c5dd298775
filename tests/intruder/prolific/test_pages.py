"""The study's Prolific page and the monitor: publish, review and bonus from the platform."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from intruder.models import Participant, PersonGroup, StudyMember
from intruder.prolific.models import ProlificAction
from tests.intruder.factories import (
    logged_in,
    make_judgment,
    make_participant,
    make_study,
    make_texts,
    make_user,
)

pytestmark = pytest.mark.django_db

REASON = "You finished all texts in under a minute without reading them. " * 3


def test_without_a_token_the_page_says_to_paste_the_link_by_hand(settings):
    settings.PROLIFIC_API_TOKEN = ""
    study = make_study()
    client = logged_in(study.owner)
    page = client.get(reverse("researcher-prolific", kwargs={"slug": study.slug}))
    assert page.status_code == 200
    assert b"Prolific is not connected" in page.content
    draft = client.post(reverse("researcher-prolific-draft", kwargs={"slug": study.slug}))
    assert draft.status_code == 302
    study.refresh_from_db()
    assert study.prolific_study_id == ""


def test_publish_review_and_bonus_from_the_page(prolific_settings, fake_prolific, confirmed):
    study = make_study(items_per_participant=1, judgments_per_text=2)
    make_texts(study=study, count=2, group=PersonGroup.FAMOUS)
    client = logged_in(study.owner)
    url = lambda name: reverse(name, kwargs={"slug": study.slug})  # noqa: E731
    response = confirmed(
        client,
        url("researcher-prolific-draft"),
        {
            "name": "Guess who",
            "description": "Read short texts about people and say whom you recognise.",
            "places": 4,
            "reward_minor": 120,
            "estimated_minutes": 10,
            "completion_action": "MANUALLY_REVIEW",
            "devices": ["desktop"],
        },
    )
    assert response.status_code == 302
    study.refresh_from_db()
    remote = fake_prolific.studies[study.prolific_study_id]
    assert remote["external_study_url"].startswith("http://testserver/")
    assert "SESSION_ID={{%SESSION_ID%}}" in remote["external_study_url"]
    confirmed(client, url("researcher-prolific-transition"), {"action": "publish"})
    assert remote["status"] == "ACTIVE"

    for pid, hit in (("PIDGOOD", True), ("PIDBAD", False)):
        p = make_participant(
            study=study,
            prolific_pid=pid,
            group=PersonGroup.FAMOUS,
            status=Participant.Status.COMPLETED,
            completed_at=timezone.now(),
        )
        text = study.descriptions.first().anonymizations.get()
        make_judgment(participant=p, text=text, slot=1 if hit else 2, identified=hit)
        sub = fake_prolific.submission_start(study.prolific_study_id, pid)
        fake_prolific.submission_set_status(sub, "AWAITING REVIEW")
    client.post(url("researcher-prolific-sync"))
    short = client.post(
        url("researcher-prolific-review"), {"pid": ["PIDBAD"], "kind": "reject", "reason": "x"}
    )
    assert short.status_code == 302 and not ProlificAction.objects.exists()
    confirmed(client, url("researcher-prolific-review"), {"pid": ["PIDGOOD"], "kind": "approve"})
    confirmed(
        client,
        url("researcher-prolific-review"),
        {"pid": ["PIDBAD"], "kind": "reject", "reason": REASON, "category": "LOW_EFFORT"},
    )
    bonus = {"per_identified": "0.75", "label": "id"}
    digest = re.search(
        r'name="confirm" value="(\w+)"',
        client.post(url("researcher-prolific-bonus"), bonus).content.decode(),
    )[1]
    for _ in range(2):  # a double click on "Confirm" pays once
        client.post(url("researcher-prolific-bonus"), {**bonus, "confirm": digest})
    assert fake_prolific.payments == [(study.prolific_study_id, "PIDGOOD", 0.75)]
    statuses = {s["participant_id"]: s["status"] for s in fake_prolific.submissions.values()}
    assert statuses == {"PIDGOOD": "APPROVED", "PIDBAD": "REJECTED"}

    page = client.get(url("researcher-prolific")).content.decode()
    assert "approve succeeded" in page and "bonus succeeded 0.75" in page
    assert study.owner.get_username() in page
    assert fake_prolific.token not in page and fake_prolific.webhook_secret not in page
    monitor = client.get(url("researcher-participants")).content.decode()
    assert 'data-testid="prolific-monitor"' in monitor and "ACTIVE" in monitor


def test_viewers_see_the_page_but_cannot_act(prolific_settings, fake_prolific):
    study = make_study()
    viewer = make_user()
    StudyMember.objects.create(study=study, user=viewer, role=StudyMember.Role.VIEWER)
    client = logged_in(viewer)
    assert (
        client.get(reverse("researcher-prolific", kwargs={"slug": study.slug})).status_code == 200
    )
    response = client.post(
        reverse("researcher-prolific-draft", kwargs={"slug": study.slug}),
        {"places": 4, "reward_minor": 120, "estimated_minutes": 10},
    )
    assert response.status_code == 403
    assert fake_prolific.studies == {}


def test_strangers_get_404(prolific_settings):
    study = make_study()
    client = logged_in(make_user())
    assert (
        client.get(reverse("researcher-prolific", kwargs={"slug": study.slug})).status_code == 404
    )

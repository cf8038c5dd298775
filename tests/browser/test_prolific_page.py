"""The study's Prolific page in a real browser, against the fake Prolific: publish, review."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from intruder.models import Participant, PersonGroup, Study
from intruder.prolific.fake_server import FakeProlific
from tests.browser import screenshots
from tests.intruder.factories import make_judgment, make_participant, make_study, make_texts

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def fake(settings):
    fake = FakeProlific()
    fake.serve()
    fake._secret_create({})
    settings.PROLIFIC_API_TOKEN = fake.token
    settings.PROLIFIC_API_URL = fake.base_url
    settings.PROLIFIC_WEBHOOK_SECRET = fake.webhook_secret
    yield fake
    fake.stop()


@pytest.mark.parametrize("width", [1280, 390])
def test_publish_then_approve_from_the_prolific_page(page, fake, width) -> None:
    from django.contrib.auth import get_user_model

    owner = get_user_model().objects.create_user(username="pat", password="prolific-pw-1")
    study = make_study(owner=owner, kind=Study.Kind.INTRUDER, items_per_participant=1)
    make_texts(study=study, count=2, group=PersonGroup.FAMOUS)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "pat")
    page.fill("input[name=password]", "prolific-pw-1")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url("**/r/**")
    page.goto(f"/r/{study.slug}/prolific/")
    page.fill("input[name=name]", "Who is it?")
    page.fill("textarea[name=description]", "Read a short text and say whom you recognise.")
    page.fill("input[name=reward_minor]", "150")
    page.click('button:has-text("Preview the Prolific draft")')
    # The preview: the exact request, with the reward and its total in the currency.
    expect(page.locator("[data-testid=plan-facts]")).to_contain_text("GBP 1.50 (150 pence)")
    expect(page.locator("[data-testid=prolific-sandbox]")).to_be_visible()
    assert fake.studies == {}
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
    page.click("[data-testid=confirm-send]")
    expect(page.locator(".messages")).to_contain_text("Prolific draft")
    page.click("button[value=publish]")
    page.click("[data-testid=confirm-send]")
    expect(page.locator("[data-testid=prolific-status]")).to_contain_text("ACTIVE")
    expect(page.locator("button[value=publish]")).to_have_count(0)
    study.refresh_from_db()
    worker = make_participant(
        study=study,
        prolific_pid="PIDBROWSER",
        group=PersonGroup.FAMOUS,
        status=Participant.Status.COMPLETED,
        completed_at=timezone.now(),
    )
    make_judgment(participant=worker, text=study.descriptions.first().anonymizations.get())
    sub = fake.submission_start(study.prolific_study_id, "PIDBROWSER")
    fake.submission_set_status(sub, "AWAITING REVIEW")
    page.click('button:has-text("Sync status")')
    page.check("input[name=pid][value=PIDBROWSER]")
    page.click("button[value=approve]")
    page.click("[data-testid=confirm-send]")
    expect(page.locator("#submissions")).to_contain_text("approve succeeded")
    assert fake.submissions[sub]["status"] == "APPROVED"
    assert fake.token not in page.content()
    # Nothing wider than the screen but the tables' own scroll regions.
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    screenshots.keep(page, f"prolific_page_{width}")

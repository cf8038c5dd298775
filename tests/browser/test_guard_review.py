"""A researcher masks a study's drafts until the machine attackers rank the person k-th or worse,
from the review page, and masks more from the words that still drive the match."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from intruder.models import AnonymizedText, Job
from intruder.risk.models import GuardRun
from tests.browser import screenshots
from tests.intruder.risk_fixtures import study_with_guardable_texts

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    "viewport", [(1280, 900), (820, 1180), (390, 844)], ids=["desktop", "tablet", "phone"]
)
def test_researcher_guards_drafts_and_sees_ranks_and_masked_words(page, viewport) -> None:
    study = study_with_guardable_texts()
    study.owner.set_password("correct horse 42")
    study.owner.save()
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    page.goto("/accounts/login/")
    page.fill("input[name=username]", study.owner.username)
    page.fill("input[name=password]", "correct horse 42")
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"/r/{study.slug}/review/")
    page.fill("#guard-form input[name=rank]", "2")
    page.click("#guard-form button[type=submit]")
    page.wait_for_selector("#guard-status")
    assert "queued" in page.inner_text("#guard-status")
    call_command("run_worker", "--once")  # the worker's code path, in-process
    assert Job.objects.get(kind="guard_study").status == Job.Status.SUCCEEDED
    # No manual reload: the page polls the job and reloads itself once it has ended. Wait for
    # the reloaded page's summary (the poll shows "succeeded" before it reloads: a click then
    # could be lost in the reload).
    expect(page.locator("#guard-status")).to_contain_text("succeeded", timeout=20_000)
    expect(page.locator("#guard-status")).to_contain_text("changed", timeout=20_000)
    run = GuardRun.objects.get()
    assert run.results.count() == 12 and "texts" not in run.job.result
    assert "origami" in page.inner_text("table")
    # Named for what it does, never "k-anonymous".
    expect(page.locator("#guard-form h2")).to_have_text(
        "Mask until the machine attackers rank the person k-th or worse"
    )
    assert "k-anonymous" not in page.content()
    # On a tablet the guard's columns are off to the right of the table: the page says so.
    # On a phone each text is a block of "column: value" lines, so nothing is off-screen.
    hint = page.locator("#guard-columns-hint")
    if 600 < viewport[0] < 1100:
        expect(hint).to_be_visible()
    else:
        expect(hint).to_be_hidden()
    screenshots.keep(page, f"guard_review_{viewport[0]}")
    # The words that still drive the match: one opens its text with the word ready to mask.
    word = page.locator("td.guard-residual a").first
    expect(word).to_be_visible()
    chosen = word.inner_text()
    word.click()
    expect(page.locator("#needle")).to_have_value(chosen)
    screenshots.keep(page, f"guard_mask_more_{viewport[0]}")
    revision = page.locator("#mask-form input[name=revision]").input_value()
    page.click("#mask-form button[value=add_span]")
    expect(page.locator("#mask-form input[name=revision]")).not_to_have_value(revision)
    guarded = AnonymizedText.objects.filter(text__contains="REIDENTIFYING").first()
    page.goto(f"/r/{study.slug}/review/{guarded.pk}/")
    assert "REIDENTIFYING" in page.content()
    screenshots.keep(page, f"guard_text_{viewport[0]}")

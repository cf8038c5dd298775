"""The review table fills in the guard's ranks and masked words while the job runs."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from intruder.models import Job
from intruder.risk.models import GuardResult
from tests.browser import screenshots
from tests.intruder.risk_fixtures import guarded_run, study_with_guardable_texts

# postgres: the page polls while the job's rows are written on another connection.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def test_guard_rows_appear_as_the_job_progresses(page, live_requests) -> None:
    study = study_with_guardable_texts()
    run = guarded_run(study, status=Job.Status.RUNNING, folds=2)
    # The job has stored two texts' rows so far; the others come later.
    finished = list(run.results.order_by("pk"))
    first, rest = finished[:2], finished[2:]
    run.results.filter(pk__in=[row.pk for row in rest]).delete()
    job = run.job
    Job.objects.filter(pk=job.pk).update(progress_done=2, progress_total=12)
    study.owner.set_password("correct horse 42")
    study.owner.save()
    page.goto("/accounts/login/")
    page.fill("input[name=username]", study.owner.username)
    page.fill("input[name=password]", "correct horse 42")
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"/r/{study.slug}/review/")
    later = rest[-1].anonymized_text_id
    ranks = f'td.guard-ranks[data-text-id="{later}"]'
    assert "waiting" in page.inner_text(ranks)
    shown = f'td.guard-ranks[data-text-id="{first[0].anonymized_text_id}"]'
    assert "tfidf" in page.inner_text(shown)
    # The worker stores more rows: the open page shows them without a reload.
    for row in rest:
        row.pk = None
    with live_requests.paused():
        GuardResult.objects.bulk_create(rest)
        Job.objects.filter(pk=job.pk).update(progress_done=12, message="fold 2: guarded")
    expect(page.locator(ranks)).to_contain_text("tfidf", timeout=20_000)
    expected = ", ".join(rest[-1].masked_words) or "nothing needed"
    assert page.inner_text(f'td.guard-words[data-text-id="{later}"]') == expected
    # The rows and the progress are two writes: a poll may fall between them.
    expect(page.locator("#guard-status")).to_contain_text("12/12", timeout=20_000)
    screenshots.keep(page, "guard_live_rows")


def test_on_a_phone_every_guard_column_of_a_finished_run_is_on_screen(page) -> None:
    """At 390 px each text is a block of "column: value" lines; no column is off-screen."""
    study = study_with_guardable_texts()
    guarded_run(study, status=Job.Status.SUCCEEDED, folds=2)
    study.owner.set_password("correct horse 42")
    study.owner.save()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/accounts/login/")
    page.fill("input[name=username]", study.owner.username)
    page.fill("input[name=password]", "correct horse 42")
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"/r/{study.slug}/review/")
    expect(page.locator("#guard-columns-hint")).to_be_hidden()
    for column in ("guard-ranks", "guard-words", "guard-residual"):
        cell = page.locator(f"td.{column}").first
        expect(cell).to_be_visible()
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (column, box)
    label = page.evaluate(
        "getComputedStyle(document.querySelector('td.guard-ranks'), '::before').content"
    )
    assert "Machine rank before" in label
    assert page.evaluate("document.documentElement.scrollWidth") <= 391
    screenshots.keep(page, "guard-table-phone")
    page.set_viewport_size({"width": 1280, "height": 900})
    expect(page.locator("#review-texts thead")).to_be_visible()
    screenshots.keep(page, "guard-table-desktop")

"""The review table fills in the guard's ranks and masked words while the job runs."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from intruder.models import Job
from intruder.risk.guarding import guard_study_texts
from tests.browser import screenshots
from tests.intruder.factories import make_job
from tests.intruder.risk_fixtures import study_with_guardable_texts

pytestmark = pytest.mark.django_db(transaction=True)


def test_guard_rows_appear_as_the_job_progresses(page) -> None:
    study = study_with_guardable_texts()
    finished = guard_study_texts(study=study, progress=lambda *a, **kw: None, k=2, folds=2)
    first, rest = finished["texts"][:2], finished["texts"][2:]
    job = make_job(
        study=study,
        kind="guard_study",
        status=Job.Status.RUNNING,
        result={**finished, "texts": first},
        progress_done=2,
        progress_total=12,
    )
    study.owner.set_password("correct horse 42")
    study.owner.save()
    page.goto("/accounts/login/")
    page.fill("input[name=username]", study.owner.username)
    page.fill("input[name=password]", "correct horse 42")
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"/r/{study.slug}/review/")
    later = rest[-1]["text_id"]
    ranks = f'td.guard-ranks[data-text-id="{later}"]'
    assert "waiting" in page.inner_text(ranks)
    # The worker publishes more rows: the open page shows them without a reload.
    Job.objects.filter(pk=job.pk).update(
        result={**finished, "texts": first + rest}, progress_done=12, message="fold 2: guarded"
    )
    expect(page.locator(ranks)).to_contain_text("tfidf", timeout=20_000)
    expected = ", ".join(rest[-1]["masked_words"]) or "nothing needed"
    assert page.inner_text(f'td.guard-words[data-text-id="{later}"]') == expected
    assert "12/12" in page.inner_text("#guard-status")
    screenshots.keep(page, "guard_live_rows")

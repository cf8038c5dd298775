"""A researcher runs the pre-release risk check on the demo study and sees the flags."""

from __future__ import annotations

import pytest

from intruder.demo import load_demo
from intruder.risk import attack_runs
from intruder.risk.models import AttackRun
from intruder.services import anonymization, jobs
from tests.browser import screenshots
from tests.browser.axe import audit, axe_available
from tests.intruder.fake_anonymizer import FakeAnonymizer
from tests.intruder.risk_fixtures import FAST_CONFIG

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_study():
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    try:
        report = load_demo(password="pw-browser-demo", attacks=False)
    finally:
        anonymization.set_anonymizer(previous)
    return report.intruder


def test_researcher_runs_a_risk_check_and_sees_flags_on_the_review_page(
    page, demo_study, live_requests
):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "pw-browser-demo")
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"/r/{demo_study.slug}/review/")
    assert "Not run yet" in page.inner_text("#risk-check")
    page.click("#risk-check button")
    page.wait_for_url(f"**/r/{demo_study.slug}/review/")
    assert "Risk check" in page.inner_text("body") and "queued" in page.inner_text("body")

    # The worker's part, in this process: the same job code path as `manage.py run_worker`,
    # with curation and the dense encoder left out so the test takes seconds.
    run = AttackRun.objects.get(purpose=AttackRun.Purpose.RISK_CHECK)
    run.attacks, run.config = ["tfidf", "bm25"], FAST_CONFIG
    run.save()
    with live_requests.paused():
        assert jobs.job_execute(run.job.pk).status == "succeeded"

    page.reload()
    panel = page.inner_text("#risk-check")
    flagged = run.results.filter(true_rank=1).values("anonymized_text").distinct().count()
    assert flagged > 0
    assert f"{flagged} text" in panel and "re-identified by the machine" in panel
    flags = page.locator("[data-risk-flag]")
    assert flags.count() == min(flagged, 50)
    first = flags.first.inner_text()
    assert "machine re-identifies" in first
    screenshots.keep(page, "risk_review_desktop")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshots.keep(page, "risk_review_phone")

    # The flag links through to the text, which shows the same flag and words.
    flags.first.locator("xpath=ancestor::tr//a").first.click()
    assert "machine re-identifies" in page.inner_text("body")
    page.goto(f"/r/{demo_study.slug}/risk/?run={run.pk}")
    assert "Persons most at risk" in page.inner_text("body")
    screenshots.keep(page, "risk_page_phone")


def test_risk_pages_pass_the_accessibility_audit(page, demo_study):
    axe_available()
    run = attack_runs.risk_check_start(
        study=demo_study, user=demo_study.owner, attacks=("tfidf",), config=FAST_CONFIG
    )
    jobs.job_execute(run.job.pk)
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "pw-browser-demo")
    page.click("button[type=submit], input[type=submit]")
    problems: list[str] = []
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for name, url in [
            ("risk-page", f"/r/{demo_study.slug}/risk/?run={run.pk}"),
            ("review-with-risk-flags", f"/r/{demo_study.slug}/review/"),
        ]:
            page.goto(url)
            problems += audit(page, name)
            problems += [f"{name} at {width} px: {p}" for p in cut_off(page)]
    assert not problems, "\n".join(problems)


# Tables wider than their box must scroll inside it: no column is cut off or widens the page.
CUT_OFF_JS = """() => {
  const found = [];
  const page = document.scrollingElement;
  if (page.scrollWidth > window.innerWidth + 1)
    found.push(`the page scrolls sideways (${page.scrollWidth} px)`);
  for (const table of document.querySelectorAll('table')) {
    let box = table.parentElement, scrolls = false;
    for (let el = box; el && el !== document.body; el = el.parentElement) {
      const overflow = getComputedStyle(el).overflowX;
      if (overflow === 'auto' || overflow === 'scroll') { scrolls = true; box = el; break; }
    }
    const right = table.getBoundingClientRect().right, edge = box.getBoundingClientRect().right;
    if (!scrolls && right > edge + 1) {
      const head = table.querySelector('th');
      found.push(`table "${head ? head.innerText.slice(0, 30) : '?'}" is cut off`);
    }
  }
  return found;
}"""


def cut_off(page) -> list[str]:
    """Return the tables on the page that overflow their box without a scroll bar."""
    return page.evaluate(CUT_OFF_JS)

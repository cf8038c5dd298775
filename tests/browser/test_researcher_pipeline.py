"""The paper's whole design on the platform, in a real browser (chromium), with no file edited
by hand: writers write; the researcher builds an intruder test from the collection,
anonymizes, reviews (a span edited in the span editor), releases after confirming, previews;
intruders judge; the analysis runs, construct loss included.

Background jobs run in the test's own process (`job_execute`, the worker's code path), as the
live server's database is the test's. The anonymizer is the fast fake (`FakeAnonymizer`);
construct loss uses the real spaCy tagger. Set INTRUDER_SCREENSHOTS=DIR to keep screenshots
of every researcher page at desktop, tablet and phone width (each is checked at all three).
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from playwright.sync_api import expect

from intruder.models import AnonymizedText, Job, Judgment, PersonGroup, Study
from intruder.services import anonymization
from intruder.services.jobs import job_execute
from tests.browser import screenshots
from tests.browser.axe import AXE_JS, audit
from tests.intruder import factories as f
from tests.intruder.fake_anonymizer import FakeAnonymizer

# postgres: the whole design on the production engine, jobs writing beside the live server.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.postgres]

PASSWORD = "correct horse 42"
WRITERS = {
    "WRITERAAAA01": [
        "Many readers know her as Octavia Brightwater, the novelist of long sea sagas. ",
        "People in radio know him as Lars Pemberton, who hosts a sailing show. ",
        "I imagine her as Mira Tollund, who keeps a lighthouse on a windy island. ",
    ],
    "WRITERBBBB02": [
        "The novelist Octavia Brightwater writes about ships and storms at night. ",
        "The host Lars Pemberton talks about tides and knots every Sunday. ",
        "The keeper Mira Tollund lives alone with a grey cat and many lamps. ",
    ],
}


def look_at(page, name: str) -> None:
    """Check the page at desktop, tablet and phone width (no sideways scrolling, the axe-core
    audit where installed); keep screenshots when asked to."""
    for width, height, suffix in (
        (1280, 900, "desktop"),
        (820, 1180, "tablet"),
        (390, 844, "phone"),
    ):
        page.set_viewport_size({"width": width, "height": height})
        screenshots.keep(page, f"{name}-{suffix}")
        # Wide tables scroll inside their box; the page itself never scrolls sideways.
        scroll, inner = page.evaluate(
            "() => [document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert scroll <= inner, f"{name} at {suffix} width scrolls sideways ({scroll} > {inner})"
        if AXE_JS.exists():  # the accessibility audit, where axe-core is installed
            problems = audit(page, f"{name}-{suffix}")
            assert not problems, "\n".join(problems)
    page.set_viewport_size({"width": 1280, "height": 900})


def run_jobs(live_requests) -> list[Job]:
    """Run every queued job as the worker would, in this process, the page's polls held."""
    with live_requests.paused():
        return [
            job_execute(job.pk, heartbeat_interval_s=None)
            for job in Job.objects.filter(status="queued")
        ]


def write(browser_context, study: Study, pid: str, texts: list[str]) -> None:
    page = browser_context.new_page()
    page.route(re.compile(r"https://app\.prolific\.com/.*"), lambda r: r.fulfill(body="ok"))
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=S1&SESSION_ID=X1")
    page.click("text=I agree to take part")
    for text in texts:
        page.wait_for_selector("#description")
        page.fill("#description", text * 2)
        page.click("text=Save and continue")
    page.click("text=Finish and return to Prolific")
    page.wait_for_url("https://app.prolific.com/**")
    page.close()


def judge(browser_context, study: Study, pid: str) -> int:
    """Judge every text the intruder is given; return how many."""
    page = browser_context.new_page()
    page.route(re.compile(r"https://app\.prolific\.com/.*"), lambda r: r.fulfill(body="ok"))
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=S2&SESSION_ID=X2")
    page.click("text=I agree to take part")
    page.click("text=Start")
    judged = 0
    while True:
        page.wait_for_selector("#anon-text, button:has-text('Finish and return to Prolific')")
        if not page.locator("#anon-text").count():
            break
        page.check("input[name=self_identified][value=yes]")
        page.fill("#guessed_name", "Octavia Brightwater")
        page.fill("#revealing_text", "the sea sagas")
        page.click("text=Next")
        judged += 1
        page.wait_for_load_state("load")
    page.click("text=Finish and return to Prolific")
    page.wait_for_url("https://app.prolific.com/**")
    page.close()
    return judged


@pytest.fixture
def fake_model():
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    yield
    anonymization.set_anonymizer(previous)


def test_writers_to_intruders_to_analysis_without_a_file(
    page, chromium_browser, live_server, live_requests, fake_model
):
    researcher = f.make_user(username="rosa", password=PASSWORD)
    collection = f.make_study(
        owner=researcher,
        slug="wave-1",
        title="Wave 1 writers",
        kind=Study.Kind.COLLECTION,
        min_description_chars=100,
    )
    f.make_target(study=collection, group=PersonGroup.FAMOUS, name="Octavia Brightwater")
    f.make_target(study=collection, group=PersonGroup.SEMIFAMOUS, name="Lars Pemberton")
    f.make_target(study=collection, group=PersonGroup.FICTITIOUS, name="Mira Tollund")

    # 1. Writers write (each in their own browser context: own cookies).
    for pid, texts in WRITERS.items():
        context = chromium_browser.new_context(base_url=live_server.url)
        write(context, collection, pid, texts)
        context.close()
        live_requests.wait_idle()
    assert collection.descriptions.count() == 6

    # 2. The researcher logs in and builds an intruder test from the collection.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/r/wave-1/")
    page.fill("#id_username", "rosa")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("text=Where the descriptions go")
    look_at(page, "01-collection")
    page.click("text=New intruder test from this collection")
    expect(page.locator("#id_kind")).to_have_value("intruder")
    # Fields of the other kind are hidden; a bad value is reported beside its field.
    expect(page.locator("#id_min_description_chars")).to_be_hidden()
    page.fill("#id_slug", "wave-1-intruders")
    page.fill("#id_title", "Wave 1 intruders (internal)")
    page.fill("#id_public_title", "A reading study")
    page.fill("#id_items_per_participant", "3")
    page.fill("#id_judgments_per_text", "1")
    page.fill("#id_identification_threshold", "1.5")
    page.click("text=Create study")
    expect(page.locator("#id_identification_threshold_error")).to_contain_text("1")
    look_at(page, "02-study-form-error")
    page.fill("#id_identification_threshold", "0.75")
    page.click("text=Create study")
    page.wait_for_selector("text=Descriptions from collection studies")
    expect(page.locator("#sources")).to_contain_text("6 new descriptions")
    study = Study.objects.get(slug="wave-1-intruders")

    # 3. Anonymize: the job takes the writers' descriptions first; "no worker" is said, not 0/0.
    # The post redirects back; reloading before that navigation ends detaches the page.
    with page.expect_navigation():
        page.click("text=Anonymize descriptions with the model")
    page.wait_for_load_state("load")
    Job.objects.filter(study=study).update(created_at=study.created_at - timedelta(minutes=3))
    page.reload()
    # The job shows at the top of the page ("Running now") and in the jobs list.
    expect(page.locator("#active-jobs tr.job-waiting")).to_contain_text("No worker")
    look_at(page, "03-no-worker")
    assert [job.status for job in run_jobs(live_requests)] == ["succeeded"]
    page.reload()
    expect(page.locator("tr.job [data-field=status]").first).to_have_text("succeeded")
    assert AnonymizedText.objects.filter(description__study=study).count() == 6

    # 4. Review: search, open a text, click a span, change its category, mark reviewed.
    page.click("text=Review anonymized texts")
    page.fill("#review-q", "lighthouse")
    page.click("text=Filter")
    expect(page.locator("#review-texts tbody tr")).to_have_count(1)
    look_at(page, "04-review-list")
    page.locator("#review-texts tbody a").first.click()
    page.wait_for_load_state("load")  # review.js is listening
    page.locator("#original a.span").first.click()
    expect(page.locator("#span-editor")).to_be_visible()
    look_at(page, "05-span-editor")
    page.select_option("#ed-category", "OTHER_IDENTIFYING_ATTRIBUTE")
    page.click("#ed-set-category")
    expect(page.locator(".anon-text").nth(1)).to_contain_text("OTHER_IDENTIFYING_ATTRIBUTE_1")
    # Select the first "lighthouse" in the original and mask only that occurrence.
    page.wait_for_load_state("load")
    page.evaluate(
        """() => {
          const walker = document.createTreeWalker(
            document.getElementById("original"), NodeFilter.SHOW_TEXT);
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            const at = n.textContent.indexOf("lighthouse");
            if (at < 0) continue;
            const range = document.createRange();
            range.setStart(n, at);
            range.setEnd(n, at + "lighthouse".length);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
            document.getElementById("original").dispatchEvent(
              new MouseEvent("mouseup", {bubbles: true}));
            return;
          }
        }"""
    )
    expect(page.locator("#needle")).to_have_value("lighthouse")
    page.select_option("#mask-category", "OCCUPATION")
    page.click("#mask-one")
    anonymized = page.locator(".anon-text").nth(1)
    expect(anonymized).to_contain_text("keeps a OCCUPATION_1 on a windy island")
    expect(anonymized).to_contain_text("keeps a lighthouse")  # the other occurrence stays
    page.click("button:has-text('Mark reviewed')")
    expect(page.locator(".badge.reviewed")).to_be_visible()

    # 5. Bulk release after a confirmation page, then preview (records nothing).
    page.goto("/r/wave-1-intruders/review/")
    page.select_option("#release-scope", "all")
    page.click("text=Continue…")
    page.wait_for_selector("text=Release 6 texts to intruders?")
    look_at(page, "06-release-confirm")
    page.click("button:has-text('Release 6 texts')")
    page.wait_for_selector("text=Released 6 text(s).")
    participants_before = study.participants.count()
    page.goto("/r/wave-1-intruders/")
    page.click("text=Preview as a participant")
    page.click("text=I agree to take part")
    page.click("button:has-text('Start')")
    expect(page.locator("#anon-text")).to_contain_text("PERSON_FIRSTNAME_1")
    look_at(page, "07-preview")
    assert study.participants.count() == participants_before

    # 6. Intruders judge, in their own contexts. The writer study closes first: a writer
    # study and an intruder study over the same persons are never open at once.
    Study.objects.filter(pk=collection.pk).update(is_open=False)
    # New studies start closed: the researcher opens this one now that its texts are released.
    page.goto("/r/wave-1-intruders/edit/")
    page.fill("#id_consent_text", "You agree to take part in a reading study.")
    page.check("#id_is_open")
    page.click("button:has-text('Save')")
    page.wait_for_url("**/r/wave-1-intruders/")
    study.refresh_from_db()
    assert study.is_open
    # One person per group and two texts per person: one intruder never judges two texts
    # about one person (docs/participants.md), so six intruders fill the six slots.
    judged = 0
    for n in range(6):
        context = chromium_browser.new_context(base_url=live_server.url)
        judged += judge(context, study, f"INTRUDER{n:04d}")
        context.close()
        live_requests.wait_idle()
    assert judged == Judgment.objects.filter(participant__study=study).count() == 6

    # 7. Monitoring and the analysis, construct loss as a background job.
    page.goto("/r/wave-1-intruders/participants/")
    expect(page.locator(".alert-full")).to_contain_text("Study full")
    expect(page.locator("#participants tbody tr")).to_have_count(6)
    look_at(page, "08-participants")
    page.goto("/r/wave-1-intruders/analysis/")
    expect(page.locator("h1")).to_contain_text("Analysis")
    # The rate with its Wilson interval and n, as the risk report gives it (issue 35).
    assert re.search(r"Judged texts identified: <strong>[^<]*CI [^<]* of 6\)", page.content())
    page.click("text=Compute construct loss")
    ran = run_jobs(live_requests)
    assert "construct_loss" in [job.kind for job in ran]
    assert {job.status for job in ran} == {"succeeded"}
    # The finished job changed the study's data: the page shows the older report, labelled,
    # until the report refresh job (the worker's part, here) stored the current one.
    page.reload()
    expect(page.locator("#report-freshness")).to_contain_text("Not yet updated")
    assert [job.status for job in run_jobs(live_requests)] == ["succeeded"]
    page.reload()
    expect(page.locator("#report-freshness")).to_contain_text("the current data")
    expect(page.locator("#construct_loss")).to_contain_text("Pronouns")
    look_at(page, "09-analysis")

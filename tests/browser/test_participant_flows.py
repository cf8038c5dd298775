"""A writer and an intruder each complete their whole flow in a real browser (chromium).

The pages are the real ones served by `live_server`; the only stand-in is Prolific itself:
the final redirect to app.prolific.com is answered by the test (no network), after the
browser has followed it with the completion code.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from intruder.models import AnonymizedText, Description, Judgment, Participant, PersonGroup, Study
from tests.intruder import factories as f

# postgres: the participant flows on the live server, texts assigned under the study lock.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.postgres]

PID = "60a1b2c3d4e5f6a7b8c9d0e1"


def stub_prolific(page) -> list[str]:
    """Answer requests to app.prolific.com locally; return the list of URLs requested."""
    seen: list[str] = []

    def fulfil(route) -> None:
        seen.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<h1>Prolific (stub)</h1>")

    page.route(re.compile(r"https://app\.prolific\.com/.*"), fulfil)
    return seen


def test_writer_describes_famous_semifamous_and_fictitious_person_and_returns_to_prolific(
    page,
) -> None:
    study = f.make_study(
        kind=Study.Kind.COLLECTION, min_description_chars=120, completion_code="WRITE42"
    )
    famous = f.make_target(study=study, group=PersonGroup.FAMOUS, name="Octavia Brightwater")
    semifamous = f.make_target(study=study, group=PersonGroup.SEMIFAMOUS, name="Lars Pemberton")
    fictitious = f.make_target(study=study, group=PersonGroup.FICTITIOUS, name="Mira Tollund")
    prolific = stub_prolific(page)

    page.goto(f"/s/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=S1&SESSION_ID=X1")
    assert "You agree to take part." in page.content()
    page.click("text=I agree to take part")

    # 1. famous, with the character counter and the server-side minimum length.
    page.wait_for_selector("#description")
    assert "Describe Octavia Brightwater" in page.content()
    page.fill("#description", "Too short.")
    expect(page.locator("#char-count")).to_have_text("10")
    page.click("text=Save and continue")
    page.wait_for_selector(".errorlist")  # the re-shown page, not the one being left
    page.wait_for_load_state("load")  # its counter script has run
    assert "Describe Octavia Brightwater" in page.content()
    assert page.input_value("#description") == "Too short."
    page.fill("#description", "Octavia Brightwater is a celebrated novelist. " * 4)
    expect(page.locator("#char-count")).to_have_text("183")  # trimmed, as the server counts
    page.click("text=Save and continue")

    # 2. semifamous: the page links to Wikipedia.
    page.wait_for_selector("text=Describe Lars Pemberton")
    link = page.locator("a[href*='wikipedia.org']")
    assert link.get_attribute("href") == semifamous.wikipedia_url
    page.fill("#description", "Lars Pemberton is a regional radio host and sailor. " * 3)
    page.click("text=Save and continue")

    # 3. fictitious: the page shows the generated profile.
    page.wait_for_selector("table.profile")
    profile = page.inner_text("table.profile")
    assert "lighthouse keeper" in profile
    assert "Iceland" in profile
    page.fill("#description", "Mira Tollund keeps a lighthouse on a windy island. " * 3)
    page.click("text=Save and continue")

    # Debrief, then Prolific with the completion code.
    page.click("text=Finish and return to Prolific")
    page.wait_for_url("https://app.prolific.com/**")
    assert prolific == ["https://app.prolific.com/submissions/complete?cc=WRITE42"]

    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED
    written = Description.objects.filter(writer=participant).order_by("task__position")
    assert [d.target_id for d in written] == [famous.pk, semifamous.pk, fictitious.pk]
    assert written[0].text.startswith("Octavia Brightwater is a celebrated novelist.")


def test_intruder_judges_every_text_and_never_sees_an_original(page) -> None:
    study = f.make_study(items_per_participant=2, judgments_per_text=1, completion_code="JUDGE7")
    texts = [
        f.make_text(
            study=study,
            description=f.make_description(
                study=study,
                target=f.make_target(study=study, name=name),
                text=f"{name} runs a ferry between two fjords and {secret}.",
            ),
            text=f"PERSON_FIRSTNAME_1 runs a ferry between two fjords and {secret}.",
        )
        for name, secret in [
            ("Ingrid Vasskog", "collects green glass"),
            ("Tomas Hellberg", "breeds white goats"),
            ("Sunniva Rake", "paints red boats"),
        ]
    ]
    originals = [t.description.target.name for t in texts]
    prolific = stub_prolific(page)
    pages_seen: list[str] = []

    page.goto(f"/s/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=S1&SESSION_ID=X1")
    pages_seen.append(page.content())
    page.click("text=I agree to take part")
    page.wait_for_selector("text=Instructions: play an adversary")
    pages_seen.append(page.content())
    page.click("text=Start")

    # Text 1: identified, with the name and what gave it away.
    page.wait_for_selector("#anon-text")
    pages_seen.append(page.content())
    assert page.inner_text(".muted") == "Text 1 of 2"
    assert page.locator(".placeholder").first.inner_text() == "PERSON_FIRSTNAME_1"
    # Follow-up questions stay hidden until the intruder answers yes or no.
    page.wait_for_selector("#guessed_name", state="hidden")
    page.wait_for_selector("#other_knowledge", state="hidden")
    page.check("input[name=self_identified][value=yes]")
    page.wait_for_selector("#guessed_name", state="visible")
    page.fill("#guessed_name", "Ingrid Vasskog")
    page.fill("#revealing_text", "the ferry")
    page.click("text=Next")

    # Text 2: not identified, with what they can tell.
    page.wait_for_selector("text=Text 2 of 2")
    pages_seen.append(page.content())
    page.check("input[name=self_identified][value=no]")
    page.wait_for_selector("#other_knowledge", state="visible")
    page.wait_for_selector("#guessed_name", state="hidden")
    page.fill("#other_knowledge", "Lives by the sea.")
    page.click("text=Next")

    page.wait_for_selector("text=Finish and return to Prolific")
    pages_seen.append(page.content())
    page.click("text=Finish and return to Prolific")
    page.wait_for_url("https://app.prolific.com/**")
    assert prolific == ["https://app.prolific.com/submissions/complete?cc=JUDGE7"]

    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED
    judgments = list(Judgment.objects.filter(participant=participant).order_by("id"))
    assert [j.self_identified for j in judgments] == [True, False]
    assert judgments[0].guessed_name == "Ingrid Vasskog"
    assert judgments[0].time_spent_ms is not None
    assert judgments[1].other_knowledge == "Lives by the sea."
    assert all(t.status == AnonymizedText.Status.RELEASED for t in texts)
    for html in pages_seen:
        for name in originals:
            assert name not in html
            assert name.split()[1] not in html

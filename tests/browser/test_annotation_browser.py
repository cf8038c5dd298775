"""A researcher annotates in a real browser: accept a suggestion, add a span, link it to an
entity, reload, and find it all saved; the TAB export then holds exactly that."""

import json

import pytest
from playwright.sync_api import expect

from anonymize.annotations.schema import AnnotatedDocument
from intruder.annotation import services
from intruder.services import anonymization
from tests.browser import screenshots
from tests.intruder.factories import make_user
from tests.intruder.fake_anonymizer import FakeAnonymizer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The emoji before "nurse" makes JavaScript's UTF-16 offsets differ from Python's.
TEXT = "Yesterday I met Orla Brennick in Dunmore 🏔 and later the nurse Orla went home."

SELECT_INSIDE = """([word, from, to]) => {
  const box = document.getElementById("ann-text");
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const at = node.textContent.indexOf(word);
    if (at >= 0) {
      const range = document.createRange();
      range.setStart(node, at + from);
      range.setEnd(node, at + to);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      box.dispatchEvent(new MouseEvent("mouseup", {bubbles: true}));
      return true;
    }
  }
  return false;
}"""


def select_inside(page, word: str, start: int, end: int) -> None:
    """Select part of ``word`` and wait until the page has read the selection."""
    assert page.evaluate(SELECT_INSIDE, [word, start, end])
    expect(page.locator("#save-status")).to_contain_text(f"Selected “{word}”")


@pytest.fixture
def project():
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    owner = make_user(username="ines", password="annotate-pw-1")
    project = services.project_create(
        owner=owner, slug="browser-ann", title="Browser annotation", scheme="textwash"
    )
    services.documents_add(project=project, documents=[AnnotatedDocument("t1", TEXT)])
    services.suggestions_compute(project=project)
    yield project
    anonymization.set_anonymizer(previous)


def login(page):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "ines")
    page.fill("input[name=password]", "annotate-pw-1")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url("**/r/**")


def test_accept_add_link_reload_and_export(page, project):
    login(page)
    page.goto(f"/annotate/{project.slug}/work/")
    status = page.locator("#save-status")
    suggestion = page.locator(".mark.suggestion", has_text="Orla").first
    expect(suggestion).to_be_visible()

    # Accept the model's suggestion "Orla" with the keyboard.
    suggestion.click()
    page.keyboard.press("Enter")
    expect(page.locator(".mark.mention", has_text="Orla")).to_have_count(1)
    expect(status).to_have_text("All changes saved")

    # Select from inside "nurse" (snapped to the whole word) and press 3 (OCCUPATION).
    select_inside(page, "nurse", 1, 4)
    page.keyboard.press("3")
    nurse = page.locator(".mark.mention", has_text="nurse")
    expect(nurse).to_have_count(1)
    screenshots.keep(page, "annotation_marked")
    # Link "the nurse" to Orla's entity (the accepted suggestion's).
    page.select_option("#field-entity", "PERSON_FIRSTNAME_1")
    expect(status).to_have_text("All changes saved")

    page.reload()
    expect(page.locator(".mark.mention", has_text="Orla")).to_have_count(1)
    page.locator(".mark.mention", has_text="nurse").click()
    expect(page.locator("#field-entity")).to_have_value("PERSON_FIRSTNAME_1")
    expect(page.locator(".mark.linked", has_text="Orla")).to_have_count(1)

    # Suggestions left undecided are dropped on submit: the tool asks first (issue 40).
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.click("#submit-task")
    page.wait_for_url(f"**/annotate/{project.slug}/")
    assert all("not decided yet" in message for message in asked)
    exported = json.loads(page.request.get(f"/annotate/{project.slug}/export/tab/").body())
    (document,) = exported
    mentions = document["annotations"]["ines"]["entity_mentions"]
    assert [(m["span_text"], m["entity_type"], m["edit_type"]) for m in mentions] == [
        ("Orla", "PERSON_FIRSTNAME", "check"),
        ("nurse", "OCCUPATION", "insert"),
    ]
    assert mentions[0]["entity_id"] == mentions[1]["entity_id"]
    for m in mentions:
        assert TEXT[m["start_offset"] : m["end_offset"]] == m["span_text"]


def test_work_done_offline_is_saved_when_the_connection_returns(page, project):
    login(page)
    page.goto(f"/annotate/{project.slug}/work/")
    expect(page.locator(".mark.suggestion").first).to_be_visible()
    page.context.set_offline(True)
    select_inside(page, "nurse", 0, 5)
    page.keyboard.press("3")
    expect(page.locator("#save-status")).to_contain_text("Offline")
    page.context.set_offline(False)
    expect(page.locator("#save-status")).to_have_text("All changes saved", timeout=40_000)
    page.reload()
    expect(page.locator(".mark.mention", has_text="nurse")).to_have_count(1)


@pytest.mark.postgres  # two tabs write one document: the version check runs in the database
def test_an_edit_from_a_stale_tab_shows_the_conflict_instead_of_overwriting(page, project):
    login(page)
    page.goto(f"/annotate/{project.slug}/work/")
    expect(page.locator(".mark.suggestion").first).to_be_visible()
    other = page.context.new_page()
    other.goto(page.url)
    expect(other.locator(".mark.suggestion").first).to_be_visible()
    # The second tab saves first: it accepts "Orla".
    other.locator(".mark.suggestion", has_text="Orla").first.click()
    other.keyboard.press("Enter")
    expect(other.locator("#save-status")).to_have_text("All changes saved")
    # The first tab, still at the old revision, marks "nurse": the server refuses.
    page.bring_to_front()  # a background tab's timers are throttled
    select_inside(page, "nurse", 0, 5)
    page.keyboard.press("3")
    expect(page.locator("#conflict")).to_be_visible()
    screenshots.keep(page, "annotation_conflict")
    page.click("#take-theirs")
    expect(page.locator(".mark.mention", has_text="Orla")).to_have_count(1)
    expect(page.locator(".mark.mention", has_text="nurse")).to_have_count(0)
    expect(page.locator("#save-status")).to_have_text("All changes saved")


def test_on_a_phone_a_tap_on_a_category_marks_the_selection(page, project):
    page.set_viewport_size({"width": 390, "height": 844})
    login(page)
    page.goto(f"/annotate/{project.slug}/work/")
    expect(page.locator(".mark.suggestion").first).to_be_visible()
    select_inside(page, "nurse", 0, 5)
    page.locator("button[data-category=OCCUPATION]").click()
    expect(page.locator(".mark.mention", has_text="nurse")).to_have_count(1)
    expect(page.locator("#save-status")).to_have_text("All changes saved")
    screenshots.keep(page, "annotation_phone")
    # The panel is a bottom sheet; nothing scrolls sideways, and both the mark's fields
    # (inside the sheet) and the Done button (above it) can be reached and tapped.
    scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
    assert scroll <= inner
    page.locator("#field-entity").click(trial=True)
    page.locator("#submit-task").click(trial=True)


def test_accept_all_keeps_focus_and_done_asks_before_dropping_suggestions(page, project):
    """Issue 40: focus fell to the page body after "Accept all", and "Done" submitted with
    suggestions undecided without asking."""
    login(page)
    page.goto(f"/annotate/{project.slug}/work/")
    expect(page.locator(".mark.suggestion").first).to_be_visible()
    expect(page.locator("#ann-text")).to_be_focused()  # a text opens with focus in it
    task_url = page.url
    open_suggestions = page.locator(".mark.suggestion").count()
    assert open_suggestions >= 1
    # Dismissing the question keeps the text, and focus goes back to it.
    messages: list[str] = []
    page.once("dialog", lambda dialog: (messages.append(dialog.message), dialog.dismiss()))
    page.click("#submit-task")
    expect(page.locator("#ann-text")).to_be_focused()
    assert len(messages) == 1 and "not decided yet" in messages[0]
    assert page.url == task_url
    # Accept all: the button disables itself, focus stays in the text.
    page.click("#accept-all")
    expect(page.locator("#accept-all")).to_be_disabled()
    expect(page.locator("#ann-text")).to_be_focused()
    expect(page.locator("#save-status")).to_have_text("All changes saved")
    # Nothing undecided now: "Done" submits without a question.
    page.on("dialog", lambda dialog: pytest.fail(f"unexpected question: {dialog.message}"))
    page.click("#submit-task")
    page.wait_for_url(f"**/annotate/{project.slug}/")

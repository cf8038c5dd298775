"""PSI annotation as Label Studio and doccano users expect it (issue 26), in a real browser:
accept all suggestions (per text and per category), undo/redo, and keyboard-only span
creation and editing; every change is saved to the server."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from intruder.annotation.models import Task
from tests.browser import screenshots
from tests.browser.test_annotation_browser import login, project  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def saved_mentions() -> list[tuple[str, str]]:
    """Return (span text, category) of the task's saved mentions, in text order."""
    task = Task.objects.get()
    text = task.document.text
    return sorted(
        (text[m.start : m.end], m.entity_type) for m in task.mentions.all().order_by("start")
    )


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_accept_all_suggestions_then_undo_and_redo(page, project, width):  # noqa: F811
    page.set_viewport_size({"width": width, "height": 900})
    login(page)
    page.goto(f"/annotate/{project.slug}/work/")
    status = page.locator("#save-status")
    suggestions = page.locator(".mark.suggestion")
    expect(suggestions.first).to_be_visible()
    open_count = suggestions.count()
    assert open_count >= 2
    screenshots.keep(page, f"annotation-tools-{width}")

    page.click("#accept-all")
    expect(page.locator(".mark.suggestion")).to_have_count(0)
    expect(page.locator(".mark.mention")).to_have_count(open_count)
    expect(status).to_have_text("All changes saved")
    assert len(saved_mentions()) == open_count

    page.click("#undo")  # one step takes the whole batch back
    expect(page.locator(".mark.suggestion")).to_have_count(open_count)
    expect(page.locator(".mark.mention")).to_have_count(0)
    expect(status).to_have_text("All changes saved")
    assert saved_mentions() == []

    page.click("#redo")
    expect(page.locator(".mark.mention")).to_have_count(open_count)
    expect(status).to_have_text("All changes saved")
    assert len(saved_mentions()) == open_count
    page.click("#undo")
    expect(page.locator(".mark.mention")).to_have_count(0)

    # Per category: only the chosen category's suggestions are accepted.
    categories = page.locator("#accept-category option").all_inner_texts()
    chosen = categories[0]
    page.select_option("#accept-category", chosen)
    page.click("#accept-all-category")
    expect(status).to_have_text("All changes saved")
    kept = saved_mentions()
    assert kept and {category for _, category in kept} == {chosen}
    expect(page.locator("#accept-category option", has_text=chosen)).to_have_count(0)
    screenshots.keep(page, f"annotation-accepted-category-{width}")


def test_spans_are_created_and_edited_with_the_keyboard_only(page, project):  # noqa: F811
    login(page)
    page.goto(f"/annotate/{project.slug}/work/")
    status = page.locator("#save-status")
    expect(page.locator(".mark.suggestion").first).to_be_visible()
    page.focus("#ann-text")
    # Words: Yesterday I met Orla Brennick in Dunmore (🏔 is no word) and later the nurse ...
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    expect(status).to_contain_text("Selected “the”")
    page.keyboard.press("Shift+ArrowRight")
    expect(status).to_contain_text("Selected “the nurse”")
    page.keyboard.press("3")  # OCCUPATION
    expect(page.locator(".mark.mention", has_text="the nurse")).to_have_count(1)
    expect(status).to_have_text("All changes saved")
    assert ("the nurse", "OCCUPATION") in saved_mentions()

    # The new mark is selected: Shift+arrows move its end, a category key changes it.
    page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    expect(page.locator(".mark.mention", has_text="the nurse Orla")).to_have_count(1)
    page.keyboard.press("Control+z")
    expect(page.locator(".mark.mention").filter(has_text="the nurse Orla")).to_have_count(0)
    expect(page.locator(".mark.mention", has_text="the nurse")).to_have_count(1)
    page.keyboard.press("]")  # step to the marks in text order
    page.keyboard.press("[")
    expect(page.locator(".mark.selected")).to_have_count(1)
    screenshots.keep(page, "annotation-keyboard-1280")

    # Delete the mention with the keyboard, then bring it back.
    page.locator(".mark.mention", has_text="the nurse").click()
    page.keyboard.press("Delete")
    expect(page.locator(".mark.mention", has_text="the nurse")).to_have_count(0)
    expect(status).to_have_text("All changes saved")
    page.keyboard.press("Control+z")
    expect(page.locator(".mark.mention", has_text="the nurse")).to_have_count(1)
    page.keyboard.press("Control+Shift+z")
    expect(page.locator(".mark.mention", has_text="the nurse")).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(status).to_have_text("All changes saved")
    assert ("the nurse", "OCCUPATION") in saved_mentions()


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_adjudication_merges_two_layers_into_gold_from_the_page(page, width):
    from intruder.annotation.adjudication import GOLD_LAYER
    from intruder.annotation.models import Annotator
    from tests.annotation.test_adjudication import TEXT, two_layers
    from tests.intruder.factories import make_user

    owner = make_user(username="ines", password="annotate-pw-1")
    adjudicated, _, _ = two_layers(owner=owner)
    page.set_viewport_size({"width": width, "height": 900})
    login(page)
    page.goto(f"/annotate/{adjudicated.slug}/")
    page.click("text=Adjudicate two annotators into a gold layer")
    expect(page.locator("#adjudicate-summary")).to_contain_text("4 disagreements")
    rows = page.locator("#disagreements tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.nth(1)).to_contain_text("category")
    screenshots.keep(page, f"annotation-adjudicate-{width}")
    # Submitting with a disagreement undecided is refused, and the choices made are kept.
    for i, side in enumerate(["b", "a", "neither"]):
        rows.nth(i).locator(f"input[value={side}]").check()
    page.click("#write-gold")
    expect(page.locator("#adjudicate-error")).to_contain_text("1 disagreement(s) undecided")
    expect(rows.nth(1).locator("input[value=a]")).to_be_checked()
    rows.nth(3).locator("input[value=b]").check()
    page.click("#write-gold")
    page.wait_for_url(f"**/annotate/{adjudicated.slug}/")
    expect(page.locator(".messages")).to_contain_text("Gold layer written: 4 mentions")
    gold = Annotator.objects.get(project=adjudicated, name=GOLD_LAYER)
    kept = [TEXT[m.start : m.end] for m in gold.tasks.get().mentions.all()]
    assert kept == ["Orla", "Brennick", "nurse", "sails"]

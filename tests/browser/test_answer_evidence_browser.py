"""Issue 36 in a real browser: a phone keyboard's typing stays clean; text set by script, a
reload after an absence and a select-all copy are seen.

Android keyboards report keys as "Unidentified" (keyCode 229) and deliver text through
composition and input events; Chrome's DevTools protocol produces exactly those, trusted, as
a phone's keyboard does (`Input.dispatchKeyEvent`, `Input.imeSetComposition`,
`Input.insertText`), on a phone-sized page with touch.
"""

from __future__ import annotations

import random
import re
import time

import pytest

from intruder.evidence.flags import exclusion_rules_set
from intruder.evidence.selectors import Flag
from intruder.models import Judgment, Study
from tests.intruder import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MIN_MS = 1500
AWAY_S = 1


def make_study():
    study = f.make_study(kind=Study.Kind.INTRUDER, items_per_participant=1, judgments_per_text=1)
    exclusion_rules_set(
        study=study,
        exclude=[Flag.AWAY],
        thresholds={"max_away_seconds": AWAY_S, "min_judgment_ms": MIN_MS},
    )
    f.make_texts(study=study, count=6)
    return study


def reach_text(page, study, pid: str) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X", timeout=120_000)
    page.click("text=I agree to take part")
    page.click("text=Start")
    page.wait_for_selector("#anon-text")


def send(page) -> None:
    page.click("text=Next")
    page.wait_for_selector("#completion-code, .msg")


def judgment_of(pid: str) -> Judgment:
    return Judgment.objects.get(participant__prolific_pid=pid)


def codes(judgment: Judgment) -> set[str]:
    return {flag["code"] for flag in judgment.flags}


def android_type(cdp, text: str, rng: random.Random) -> None:
    """Type as Gboard does: an "Unidentified" key, the word composed letter by letter, then
    committed; a space commits the word."""
    for word in re.findall(r"\S+\s*", text):
        stem = word.rstrip()
        for end in range(1, len(stem) + 1):
            cdp.send(
                "Input.dispatchKeyEvent",
                {"type": "rawKeyDown", "key": "Unidentified", "windowsKeyCode": 229},
            )
            cdp.send(
                "Input.imeSetComposition",
                {"text": stem[:end], "selectionStart": end, "selectionEnd": end},
            )
            cdp.send(
                "Input.dispatchKeyEvent",
                {"type": "keyUp", "key": "Unidentified", "windowsKeyCode": 229},
            )
            time.sleep(rng.uniform(0.03, 0.09))
        cdp.send("Input.insertText", {"text": word})


def test_an_android_keyboard_on_a_phone_is_not_flagged(
    chromium_browser, live_server, live_requests
) -> None:
    study = make_study()
    context = chromium_browser.new_context(
        base_url=live_server.url,
        viewport={"width": 390, "height": 844},
        has_touch=True,
        is_mobile=True,
        user_agent="Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 "
        "(KHTML, like Gecko) Chrome/150.0 Mobile Safari/537.36",
    )
    context.set_default_timeout(60_000)
    page = context.new_page()
    try:
        reach_text(page, study, "ANDROID1")
        time.sleep(MIN_MS / 1000)
        page.tap("input[name=self_identified][value=no]")
        page.tap("#other_knowledge")
        cdp = context.new_cdp_session(page)
        android_type(cdp, "Someone who lives by the sea, maybe a sailor.", random.Random(3))
        send(page)
    finally:
        context.close()
        live_requests.wait_idle()
    judgment = judgment_of("ANDROID1")
    assert judgment.telemetry is not None
    assert judgment.telemetry["fields"]["other_knowledge"]["typed"] >= len(judgment.other_knowledge)
    assert codes(judgment) == set(), judgment.flags


def test_a_name_set_by_script_beside_a_typed_reason_is_flagged_inserted(page) -> None:
    study = make_study()
    reach_text(page, study, "SCRIPTED1")
    time.sleep(MIN_MS / 1000)
    page.check("input[name=self_identified][value=yes]")
    page.evaluate("document.getElementById('guessed_name').value = 'Mira Tollund'")
    page.click("#revealing_text")
    page.keyboard.type("The lighthouse and the old maps.", delay=40)
    send(page)
    judgment = judgment_of("SCRIPTED1")
    assert judgment.guessed_name == "Mira Tollund"
    assert codes(judgment) == {Flag.INSERTED}
    reason = judgment.flags[0]["reason"]
    assert "“Who is it?” was changed 1 time(s) by a script" in reason
    assert "“Who is it?”: 12 of 12 characters neither typed nor pasted" in reason


def test_leaving_then_reloading_before_answering_is_flagged_away(page) -> None:
    study = make_study()
    reach_text(page, study, "RELOAD01")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
    other = page.context.new_page()
    other.bring_to_front()
    time.sleep(AWAY_S + 1.5)
    page.bring_to_front()
    other.close()
    time.sleep(0.3)
    page.reload()  # the new page counts from zero; the first view's beacon does not
    page.wait_for_selector("#anon-text")
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    page.keyboard.type("A sailor.", delay=60)
    send(page)
    judgment = judgment_of("RELOAD01")
    assert judgment.telemetry["page_views"] == 2
    assert judgment.telemetry["reported_views"] == 2
    assert Flag.AWAY in codes(judgment), judgment.flags


def test_select_all_and_triple_click_copies_are_recorded_and_carry_the_canary(page) -> None:
    study = make_study()
    reach_text(page, study, "COPIER01")
    page.click("#progress-label")  # focus the page, not a field
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.press("ControlOrMeta+C")
    everything = page.evaluate("navigator.clipboard.readText()")
    page.locator("#anon-text").click(click_count=3)
    page.keyboard.press("ControlOrMeta+C")
    paragraph = page.evaluate("navigator.clipboard.readText()")
    for copied in (everything, paragraph):
        assert re.search(r"the word “(\w+)”", copied), copied
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    page.keyboard.type("A sailor, I think.", delay=60)
    time.sleep(MIN_MS / 1000)
    send(page)
    assert judgment_of("COPIER01").telemetry["copy_events"] == 2


def test_typing_then_reloading_then_finishing_the_answer_stays_clean(page) -> None:
    """An honest reload mid-answer: whatever the browser restores of the field, the first
    view's typing reached the server (its beacon), so the answer is accounted for."""
    study = make_study()
    reach_text(page, study, "RELOADER1")
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    page.keyboard.type("Someone who lives ", delay=40)
    page.reload()
    page.wait_for_selector("#anon-text")
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    page.keyboard.press("End")
    page.keyboard.type("by the sea.", delay=40)
    time.sleep(MIN_MS / 1000)
    send(page)
    judgment = judgment_of("RELOADER1")
    assert judgment.telemetry["page_views"] == 2
    assert codes(judgment) == set(), judgment.flags


def test_the_own_page_in_a_second_tab_for_a_few_seconds_is_not_away(page) -> None:
    """Issue 48's honest two tabs: the participant opens their own page again in a second
    tab for 2-3 s (the rule here allows 1 s away), closes it and answers in the first."""
    study = make_study()
    reach_text(page, study, "TWOTABS01")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
    second = page.context.new_page()
    second.goto(page.url)
    second.wait_for_selector("#anon-text")
    second.bring_to_front()
    time.sleep(2.5)
    page.bring_to_front()
    second.close()
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    page.keyboard.type("A sailor.", delay=60)
    time.sleep(MIN_MS / 1000)
    send(page)
    judgment = judgment_of("TWOTABS01")
    assert judgment.telemetry["page_views"] == 2
    assert judgment.telemetry["reported_views"] == 2
    assert codes(judgment) == set(), judgment.flags


@pytest.mark.parametrize("how", ["fill", "exec_command"])
def test_a_whole_answer_inserted_by_one_trusted_input_event_is_flagged_inserted(page, how) -> None:
    """Issue 48's 0 of 21: an automation's fill() and execCommand("insertText") arrive as one
    trusted input event carrying the whole answer; the page reports the largest."""
    study = make_study()
    pid = f"INSERT{how.upper()[:4]}"
    reach_text(page, study, pid)
    page.check("input[name=self_identified][value=no]")
    answer = "A lighthouse keeper from the north."
    if how == "fill":
        page.fill("#other_knowledge", answer)
    else:
        page.focus("#other_knowledge")
        page.evaluate("t => document.execCommand('insertText', false, t)", answer)
    time.sleep(MIN_MS / 1000)
    send(page)
    judgment = judgment_of(pid)
    assert judgment.telemetry["fields"]["other_knowledge"]["largest"] == len(answer)
    assert Flag.INSERTED in codes(judgment), judgment.flags


def test_typing_key_by_key_at_a_human_pace_is_not_inserted(page) -> None:
    study = make_study()
    reach_text(page, study, "KEYS0001")
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    page.keyboard.type("A lighthouse keeper.", delay=90)
    time.sleep(MIN_MS / 1000)
    send(page)
    judgment = judgment_of("KEYS0001")
    assert judgment.telemetry["fields"]["other_knowledge"]["largest"] == 1
    assert codes(judgment) == set(), judgment.flags

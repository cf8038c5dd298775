"""Telemetry, canary and flags in a real browser: a few scripted sessions of each kind.

The benchmark (benchmarks/intruder_bots.py) runs 50 of each; here one of each proves the path:
the browser's own events (typed keys, Ctrl+V, the tab losing focus, a copy of the text)
reach the server, which flags bots and leaves a human-paced session alone. The hidden
canary stays out of what people see and hear, yet travels with a copy.
"""

from __future__ import annotations

import random
import re
import time

import pytest

from intruder.evidence.flags import exclusion_rules_set
from intruder.evidence.selectors import Flag
from intruder.models import Judgment, Study
from tests.browser.axe import audit, axe_available
from tests.intruder import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


MIN_MS = 1500
AWAY_S = 1


def warm_up(page) -> None:
    """Load one page with a long timeout: the live server's first request is slow (imports,
    static files) on a busy machine, and the sessions below time what follows."""
    page.goto("/accounts/login/", timeout=120_000)


def make_bot_study():
    study = f.make_study(kind=Study.Kind.INTRUDER, items_per_participant=1, judgments_per_text=1)
    # Shorter limits than the defaults (3 s per text, 8 s away), so that the sessions below
    # stay short: typing an answer at a human pace takes longer than MIN_MS, a bot's does not.
    exclusion_rules_set(
        study=study,
        exclude=[Flag.AWAY],
        thresholds={"max_away_seconds": AWAY_S, "min_judgment_ms": MIN_MS},
    )
    f.make_texts(study=study, count=12)
    return study


def reach_text(page, study, pid: str) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X")
    page.click("text=I agree to take part")
    page.click("text=Start")
    page.wait_for_selector("#anon-text")


def human_type(page, text: str, rng: random.Random) -> None:
    for char in text:
        if char.isalpha() and rng.random() < 0.08:
            page.keyboard.type("x", delay=90)
            page.keyboard.press("Backspace")
        page.keyboard.type(char, delay=rng.randint(50, 120))


def send(page) -> None:
    page.click("text=Next")
    page.wait_for_selector("#completion-code, .msg")


def flags_of(pid: str) -> set[str]:
    judgment = Judgment.objects.get(participant__prolific_pid=pid)
    assert judgment.telemetry is not None, "the browser sent no telemetry"
    return {flag["code"] for flag in judgment.flags}


def test_human_paced_sessions_are_not_flagged_and_bots_are(page) -> None:
    study = make_bot_study()
    warm_up(page)
    rng = random.Random(7)
    reach_text(page, study, "HUMAN")
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    human_type(page, "Someone who lives by the sea.", rng)
    send(page)
    assert flags_of("HUMAN") == set()
    page.context.clear_cookies()

    reach_text(page, study, "PASTE")
    time.sleep(MIN_MS / 1000)  # a paste after a human's reading time is flagged all the same
    page.evaluate("t => navigator.clipboard.writeText(t)", "A keeper of a northern lighthouse.")
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    page.keyboard.press("ControlOrMeta+V")
    send(page)
    assert Flag.PASTE in flags_of("PASTE")
    page.context.clear_cookies()

    reach_text(page, study, "FAST")
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    page.keyboard.type("a sailor", delay=5)
    send(page)
    assert Flag.TOO_FAST in flags_of("FAST")
    page.context.clear_cookies()

    reach_text(page, study, "CANARY")
    page.locator("#anon-text").select_text()
    page.keyboard.press("ControlOrMeta+C")
    copied = page.evaluate("navigator.clipboard.readText()")
    word = re.search(r"the word “(\w+)”", copied).group(1)
    page.check("input[name=self_identified][value=no]")
    page.click("#other_knowledge")
    human_type(page, f"A lighthouse keeper. {word}", rng)
    send(page)
    assert Flag.CANARY in flags_of("CANARY")
    page.context.clear_cookies()

    reach_text(page, study, "AWAY")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
    other = page.context.new_page()
    other.bring_to_front()
    time.sleep(AWAY_S + 0.5)
    page.bring_to_front()
    other.close()
    time.sleep(0.5)  # the page's focus event, which closes the absence, before the answer
    page.check("input[name=self_identified][value=yes]")
    page.click("#guessed_name")
    human_type(page, "Mira Tollund", rng)
    page.click("#revealing_text")
    human_type(page, "the lighthouse", rng)
    send(page)
    assert Flag.AWAY in flags_of("AWAY")
    page.context.clear_cookies()


def test_canary_is_neither_seen_nor_heard_but_travels_with_a_copy(page) -> None:
    axe_available()
    study = make_bot_study()
    warm_up(page)
    reach_text(page, study, "LOOKER01")
    canary = page.locator("#anon-text .canary")
    word = re.search(r"“(\w+)”", canary.text_content()).group(1)
    assert canary.get_attribute("aria-hidden") == "true"
    box = canary.bounding_box()
    assert box is None or (box["width"] <= 1 and box["height"] <= 1)
    # Clipped to nothing: no pixel of it is painted.
    assert page.evaluate("el => getComputedStyle(el).clipPath", canary.element_handle()) != "none"
    assert word not in page.locator("body").aria_snapshot()
    assert (
        word not in page.get_by_role("main").aria_snapshot()
        if page.get_by_role("main").count()
        else True
    )
    assert not audit(page, "intruder-text-with-canary")
    page.locator("#anon-text").select_text()
    page.keyboard.press("ControlOrMeta+C")
    assert word in page.evaluate("navigator.clipboard.readText()")

"""Attention checks in a real browser: one intruder passes the check, one fails it.

The check comes between the two texts, is answered in a plain text box (an empty answer is
asked again after a redirect, so reloading never resubmits), and only a failed one flags
the intruder's judgments.
"""

from __future__ import annotations

import re

import pytest

from intruder.evidence.models import AttentionCheck
from intruder.evidence.selectors import Flag
from intruder.models import Judgment, Study
from tests.browser.axe import AXE_JS, audit
from tests.intruder import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def answer_text(page) -> None:
    page.wait_for_selector("#anon-text")
    page.check("input[name=self_identified][value=no]")
    page.fill("#other_knowledge", "Someone who lives by the sea.")
    page.click("text=Next")


def attention_flagged(pid: str) -> list[bool]:
    return [
        any(flag["code"] == Flag.ATTENTION for flag in j.flags)
        for j in Judgment.objects.filter(participant__prolific_pid=pid)
    ]


@pytest.mark.parametrize("width", [1280, 390])
def test_an_intruder_who_passes_is_not_flagged_and_one_who_fails_is(page, width) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    study = f.make_study(
        kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2, attention_checks=1
    )
    f.make_texts(study=study, count=4)
    page.goto("/accounts/login/", timeout=120_000)  # the live server's first request is slow
    for pid, passes in (("CAREFUL1", True), ("CARELESS1", False)):
        page.goto(f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X")
        page.click("text=I agree to take part")
        page.click("text=Start")
        answer_text(page)
        page.wait_for_selector("#check-form")
        prompt = page.inner_text("#check-prompt")
        word = re.search(r"\u201c(\w+)\u201d", prompt).group(1)
        # An empty answer comes back with its error after a redirect; a reload keeps the page.
        page.click("text=Next")
        page.wait_for_selector("#check-answer-errors")
        page.reload()
        assert page.is_visible("#check-answer-errors")
        if AXE_JS.exists():  # the page with its error, audited (and kept as a screenshot)
            assert not audit(page, "attention-check-empty")
        page.fill("#check-answer", word.upper() if passes else "banana")
        page.click("text=Next")
        answer_text(page)
        page.wait_for_selector("#completion-code")
        check = AttentionCheck.objects.get(participant__prolific_pid=pid)
        assert check.passed is passes and check.after_texts == 1
        assert Judgment.objects.filter(participant__prolific_pid=pid).count() == 2
        assert attention_flagged(pid) == [not passes, not passes]
        page.context.clear_cookies()

"""The knowledge budget on the risk page in a real browser, at 1280 and 390 px."""

from __future__ import annotations

import pytest

from intruder.risk.models import AttackRun
from tests.intruder.risk_fixtures import risk_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_researcher_starts_a_run_knowing_each_person_through_two_descriptions(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    study = risk_study(per_person=4)
    owner = study.owner
    owner.set_password("pw-budget")
    owner.save()
    page.goto("/accounts/login/", timeout=120_000)  # the live server's first request is slow
    page.fill("#id_username", owner.username)
    page.fill("#id_password", "pw-budget")
    page.click("button[type=submit]")
    page.wait_for_url("**/r/")
    page.goto(f"/r/{study.slug}/risk/")
    budget = page.locator("input[name=knowledge_budget]")
    budget.scroll_into_view_if_needed()
    assert budget.is_visible() and page.locator("input[name=budget_resamples]").is_visible()
    assert "as well as b writers do" in page.inner_text("body")
    for box in page.locator("input[name=attacks]").all():
        if box.get_attribute("value") not in ("tfidf", "bm25"):
            box.uncheck()
    budget.fill("2")
    page.click("text=Start attack run")
    page.wait_for_selector("text=queued as job")
    run = AttackRun.objects.get()
    assert (run.knowledge_budget, run.budget_resamples) == (2, 10)
    assert "b = 2 per person × 10 resamples" in page.inner_text("body")

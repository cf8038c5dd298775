"""The familiarity question in a real browser: on the debrief only, after the last answer.

The intruder judges both texts without ever seeing the question, then ticks the famous person
they had heard of, among decoys, and presses "Finish and return to Prolific" (the one button,
which once lost the answer); a contradiction comes back with its error after a reload. The
semi-famous person is never listed. The settings page explains why.
"""

from __future__ import annotations

import pytest

from intruder.models import FamiliarityAnswer, FamiliarityDecoyAnswer, PersonGroup, Study
from tests.browser.axe import AXE_JS, audit
from tests.browser.test_participant_flows import stub_prolific
from tests.intruder import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_debrief_asks_which_famous_persons_the_intruder_had_heard_of(page, width) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    study = f.make_study(
        kind=Study.Kind.INTRUDER,
        items_per_participant=2,
        judgments_per_text=1,
        ask_familiarity=True,
    )
    for name, group in (("Oriel Vantassel", PersonGroup.FAMOUS), ("Bram Oskarsen", "famous")):
        target = f.make_target(study=study, name=name, group=group)
        f.make_text(study=study, description=f.make_description(study=study, target=target))
    f.make_target(study=study, name="Hilde Quorm", group=PersonGroup.SEMIFAMOUS)
    page.goto("/accounts/login/", timeout=120_000)  # the live server's first request is slow
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID=FAMILIAR1&STUDY_ID=S&SESSION_ID=X")
    page.click("text=I agree to take part")
    page.click("text=Start")
    for _ in range(2):
        page.wait_for_selector("#anon-text")
        assert not page.is_visible("#familiarity")
        page.check("input[name=self_identified][value=no]")
        page.fill("#other_knowledge", "Someone who lives by the sea.")
        page.click("text=Next")
    page.wait_for_selector("#familiarity")
    form = page.inner_text("#familiarity")
    assert "Oriel Vantassel" in form and "Bram Oskarsen" in form and "Hilde Quorm" not in form
    if AXE_JS.exists():
        assert not audit(page, f"familiarity-{width}")
    assert len(page.query_selector_all("#familiarity input[name=known]")) >= 2 + 3  # decoys
    # A contradiction comes back with its error and the ticks kept, on a reloadable page.
    page.check("#familiarity label:has-text('Oriel Vantassel') input")
    page.check("#familiarity label:has-text('None of these') input")
    page.click("text=Finish and return to Prolific")
    page.wait_for_selector("#familiarity-error")
    page.reload()
    assert "choose one or the other" in page.inner_text("#familiarity")
    assert page.is_checked("#familiarity label:has-text('Oriel Vantassel') input")
    page.uncheck("#familiarity label:has-text('None of these') input")
    prolific = stub_prolific(page)
    page.click("text=Finish and return to Prolific")
    page.wait_for_url("https://app.prolific.com/**")
    assert prolific and "cc=" in prolific[0]
    answers = dict(FamiliarityAnswer.objects.values_list("target__name", "heard_of"))
    assert answers == {"Oriel Vantassel": True, "Bram Oskarsen": False}
    assert FamiliarityDecoyAnswer.objects.count() >= 3
    assert not FamiliarityDecoyAnswer.objects.filter(heard_of=True).exists()
    # The researcher's settings page offers the question and says why famous persons only.
    page.context.clear_cookies()
    page.goto("/accounts/login/")
    owner = study.owner
    owner.set_password("pw-familiarity")
    owner.save()
    page.fill("#id_username", owner.username)
    page.fill("#id_password", "pw-familiarity")
    page.click("button[type=submit]")
    page.wait_for_url("**/r/")
    page.goto(f"/r/{study.slug}/edit/")
    assert page.is_visible("input[name=ask_familiarity]")
    assert "Famous persons only" in page.inner_text("body")

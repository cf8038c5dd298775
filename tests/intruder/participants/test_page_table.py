"""The participant flow is one table of pages: URLs, templates and the preview come from it."""

from __future__ import annotations

import pytest
from django.template.loader import get_template
from django.urls import resolve, reverse

from intruder.models import Study
from intruder.selectors.participant import Step
from intruder.views.participant.pages import PAGE_SEQUENCE, PAGES, STATUS_PAGES, STEP_PAGES


@pytest.mark.parametrize("step", list(PAGES))
def test_each_page_posts_to_its_own_participant_url_served_by_its_view(step: str) -> None:
    page = PAGES[step]
    url = reverse(page.url_name, args=["token"])
    assert url == f"/p/token/{page.path}/"
    assert resolve(url).func is page.view
    get_template(page.template)


def test_each_kind_of_study_walks_consent_to_debrief_in_order() -> None:
    steps = {kind: [page.step for page in pages] for kind, pages in PAGE_SEQUENCE.items()}
    assert steps == {
        Study.Kind.COLLECTION: [Step.CONSENT, Step.WRITE, Step.DEBRIEF],
        Study.Kind.INTRUDER: [Step.CONSENT, Step.INSTRUCTIONS, Step.JUDGE, Step.DEBRIEF],
    }
    # Attention checks come between texts when due, never as a step of their own.
    assert all(PAGES[Step.CHECK] not in pages for pages in PAGE_SEQUENCE.values())


def test_the_preview_names_its_pages_as_before() -> None:
    preview = {page.step: page.preview_step for page in PAGES.values()}
    assert preview[Step.JUDGE] == "text" and preview[Step.WRITE] == "write"
    assert reverse("researcher-preview-item", args=["s", "text", 1]) == "/r/s/preview/text/1/"


def test_every_step_a_participant_can_be_on_has_one_page_class() -> None:
    steps = {value for name, value in vars(Step).items() if name.isupper()}
    assert set(STEP_PAGES) == steps
    assert not set(PAGES) & set(STATUS_PAGES)
    # One class per page: no two steps share a page class.
    assert len({type(page) for page in STEP_PAGES.values()}) == len(STEP_PAGES)
    # Status pages have no form to post to.
    assert all(not page.path for page in STATUS_PAGES.values())

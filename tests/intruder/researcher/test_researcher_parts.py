"""Risk (and the rehearsal and the LLM jobs) join the core's researcher pages by one mechanism,
the registry in `intruder.views.researcher.parts` (issue 50): their HTML comes from their own
templates, and without the registration the core's pages render without it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.risk.models import AttackResult, AttackRun
from intruder.views.researcher import parts
from tests.intruder.factories import logged_in, make_description, make_study, make_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged():
    """A study with one draft the latest risk check re-identifies."""
    study = make_study()
    text = make_text(study=study, description=make_description(study=study), status="draft")
    run = AttackRun.objects.create(
        study=study, purpose=AttackRun.Purpose.RISK_CHECK, attacks=["tfidf"]
    )
    AttackResult.objects.create(
        run=run,
        description=text.description,
        anonymized_text=text,
        method=text.method,
        attack="tfidf",
        predicted_key="x",
        true_rank=1,
        driving_words=["rower"],
    )
    return study, text


def _pages(study, text) -> dict[str, str]:
    client = logged_in(study.owner)
    urls = {
        "study": reverse("researcher-study", args=[study.slug]),
        "review": reverse("researcher-review", args=[study.slug]),
        "text": reverse("researcher-review-text", args=[study.slug, text.pk]),
    }
    return {name: client.get(url).content.decode() for name, url in urls.items()}


def test_risks_parts_show_on_the_study_and_review_pages(flagged):
    study, text = flagged
    pages = _pages(study, text)
    assert 'id="risk-controls"' in pages["study"] and "1 text flagged" in pages["study"]
    # The rehearsal's card and the LLM forms join the study page the same way, in the
    # order the app registers them.
    study_page = pages["study"]
    assert study_page.index('id="rehearsal"') < study_page.index('id="risk-controls"')
    assert 'id="llm-prompt"' in study_page
    assert 'id="risk-check"' in pages["review"]
    for page in ("review", "text"):
        assert f'data-risk-flag="{text.pk}"' in pages[page] and "rower" in pages[page]
    # A form posted from a part carries the page's CSRF token (the part is rendered with
    # the request).
    assert 'name="csrfmiddlewaretoken" value="' in pages["study"]


def test_without_a_registration_the_pages_show_no_part_of_a_package(flagged, monkeypatch):
    study, text = flagged
    monkeypatch.setattr(parts, "PARTS", {})
    pages = _pages(study, text)
    assert all(
        marker not in html
        for html in pages.values()
        for marker in (
            'id="risk-controls"',
            'id="risk-check"',
            "data-risk-flag",
            'id="guard-form"',
            'id="rehearsal"',
            'id="llm-prompt"',
        )
    ), "a package's part without its registration"
    assert all("<h1" in html for html in pages.values())

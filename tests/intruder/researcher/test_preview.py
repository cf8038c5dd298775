"""The researcher's preview: the real participant pages, and nothing recorded."""

from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from intruder.models import AnonymizedText, PersonGroup, Study, StudyMember
from tests.intruder.factories import (
    logged_in,
    make_member,
    make_study,
    make_target,
    make_texts,
    make_user,
)

pytestmark = pytest.mark.django_db

BANNER = "Preview - nothing is recorded"
WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE)", re.IGNORECASE)


def study_tables() -> dict[str, int]:
    """Return the row count of every model of the intruder app."""
    return {m.__name__: m.objects.count() for m in apps.get_app_config("intruder").get_models()}


def preview_url(study: Study) -> str:
    return reverse("researcher-preview", args=[study.slug])


def follow(client: Client, url: str, data: dict | None = None) -> tuple[str, str]:
    """Post (or get) `url`; return the page a browser lands on and its HTML."""
    response = client.post(url, data or {}) if data is not None else client.get(url)
    while response.status_code == 302:
        url = response["Location"]
        response = client.get(url)
    assert response.status_code == 200, url
    return url, response.content.decode()


def form_action(html: str) -> str:
    return re.search(r'<form method="post" action="([^"]+)"', html).group(1)


def test_intruder_preview_walks_every_page_and_records_nothing():
    study = make_study(items_per_participant=2, judgments_per_text=1)
    make_texts(study=study, count=3)
    client = logged_in(study.owner)
    before = study_tables()
    with CaptureQueriesContext(connection) as queries:
        walk_intruder_preview(client, study)
    # Not a row written anywhere, the session table included: the state is a signed cookie.
    assert not [q["sql"] for q in queries.captured_queries if WRITES.match(q["sql"])]
    assert study_tables() == before
    assert not study.participants.exists()


def walk_intruder_preview(client: Client, study: Study) -> None:

    _url, page = follow(client, preview_url(study))
    assert "<h1>Consent</h1>" in page and BANNER in page
    _url, page = follow(client, form_action(page), {"decision": "agree"})
    assert "play an adversary" in page and BANNER in page
    item_url, page = follow(client, form_action(page), {})
    assert "Text 1 of 2" in page and 'class="placeholder"' in page and BANNER in page

    # A rejected answer follows post/redirect/get with what was typed kept.
    url, page = follow(client, form_action(page), {"self_identified": "yes", "revealing_text": "x"})
    assert url == item_url
    assert "Please say who you think it is" in page and ">x</textarea>" in page
    _url, page = follow(
        client, form_action(page), {"self_identified": "no", "other_knowledge": "A sailor"}
    )
    assert "Text 2 of 2" in page and "errorlist" not in page
    _url, page = follow(
        client, form_action(page), {"self_identified": "no", "other_knowledge": "A sailor"}
    )
    assert "Thank you" in page and study.completion_code in page and BANNER in page
    _url, page = follow(client, form_action(page), {})
    assert "End of the preview" in page and "app.prolific.com" not in page


def test_collection_preview_shows_the_writing_tasks_and_stores_no_description():
    study = make_study(kind=Study.Kind.COLLECTION, min_description_chars=50)
    make_target(study=study, group=PersonGroup.FAMOUS, name="Edda Sorensen")
    make_target(study=study, group=PersonGroup.FICTITIOUS, name="Hallvard Ruud")
    client = logged_in(study.owner)
    before = study_tables()

    _url, page = follow(client, preview_url(study))
    _url, page = follow(client, form_action(page), {"decision": "agree"})
    assert "Description 1 of 2" in page and "Describe Edda Sorensen" in page
    assert 'for="description"' in page and "data-draft-key" not in page
    _url, page = follow(client, form_action(page), {"text": "Too short."})
    assert "Please write at least 50 characters" in page and ">Too short.</textarea>" in page
    _url, page = follow(client, form_action(page), {"text": "Edda Sorensen sails. " * 5})
    assert "Description 2 of 2" in page and "lighthouse keeper" in page
    _url, page = follow(client, form_action(page), {"text": "Hallvard Ruud lives. " * 5})
    assert "Thank you" in page
    assert study_tables() == before


def test_preview_before_any_release_says_release_texts_first():
    study = make_study()
    make_texts(study=study, count=2, status=AnonymizedText.Status.DRAFT)
    page = logged_in(study.owner).get(preview_url(study)).content.decode()
    assert "Release texts first" in page
    assert reverse("researcher-review", args=[study.slug]) in page


def test_collection_preview_without_targets_says_import_targets_first():
    study = make_study(kind=Study.Kind.COLLECTION)
    page = logged_in(study.owner).get(preview_url(study)).content.decode()
    assert "Import targets first" in page


@pytest.mark.parametrize(
    ("role", "status"),
    [("anonymous", 302), ("other", 404), ("viewer", 200), ("editor", 200), ("owner", 200)],
)
def test_preview_needs_a_login_and_a_role_on_the_study(role, status):
    study = make_study()
    make_texts(study=study, count=1)
    client = Client()
    if role == "owner":
        client.force_login(study.owner)
    elif role in ("viewer", "editor"):
        client.force_login(make_member(study=study, role=StudyMember.Role(role)))
    elif role == "other":
        client.force_login(make_user())
    response = client.get(preview_url(study))
    assert response.status_code == status
    if role == "anonymous":
        assert response["Location"].startswith("/accounts/login/")


def test_start_again_draws_afresh_and_unknown_pages_are_404():
    study = make_study(items_per_participant=1)
    make_texts(study=study, count=1)
    client = logged_in(study.owner)
    assert client.get(f"{preview_url(study)}?restart=1")["Location"] == preview_url(study)
    assert client.get(f"{preview_url(study)}text/5/").status_code == 404
    assert client.get(f"{preview_url(study)}write/1/").status_code == 404
    assert client.get(f"{preview_url(study)}nonsense/").status_code == 404


def test_a_long_rejected_text_is_cut_to_fit_the_preview_cookie():
    study = make_study(kind=Study.Kind.COLLECTION, min_description_chars=50)
    make_target(study=study, group=PersonGroup.FAMOUS, name="Edda Sorensen")
    client = logged_in(study.owner)
    _url, page = follow(client, preview_url(study))
    _url, page = follow(client, form_action(page), {"decision": "agree"})
    _url, page = follow(client, form_action(page), {"text": "x" * 25_000})
    assert "Please keep the description under 20000 characters" in page


def test_declining_consent_in_the_preview_shows_the_participants_page():
    study = make_study()
    make_texts(study=study, count=1)
    client = logged_in(study.owner)
    _url, page = follow(client, preview_url(study))
    _url, page = follow(client, form_action(page), {"decision": "decline"})
    assert "You have left this study" in page and BANNER in page
    assert not study.participants.exists()


def test_study_page_offers_the_preview_instead_of_a_real_enrolment():
    study = make_study()
    page = logged_in(study.owner).get(reverse("researcher-study", args=[study.slug]))
    html = page.content.decode()
    assert f'href="{preview_url(study)}"' in html
    assert "PROLIFIC_PID=TEST" not in html

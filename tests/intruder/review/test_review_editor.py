"""The review page as a span editor: change a span's category, move its boundaries, unmask one
or every occurrence, mask only a selected occurrence, mark reviewed, search and filter."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from intruder.models import AnonymizedText
from intruder.services.review import anonymized_text_set_spans
from tests.intruder.factories import make_description, make_member, make_study, make_target

pytestmark = pytest.mark.django_db

ORIGINAL = "Ottilie Brandt grew up in Marsden. Later Ottilie moved to Lisbon with her dog Pim."


@pytest.fixture
def draft() -> AnonymizedText:
    study = make_study()
    target = make_target(study=study, name="Ottilie Brandt")
    description = make_description(study=study, target=target, text=ORIGINAL)
    text = AnonymizedText.objects.create(description=description, text="x", spans=[])
    spans = [
        {"start": 0, "end": 7, "category": "PERSON_FIRSTNAME"},
        {"start": 8, "end": 14, "category": "PERSON_LASTNAME"},
        {"start": 26, "end": 33, "category": "PERSON_FIRSTNAME"},  # Marsden: wrong category
        {"start": 41, "end": 48, "category": "PERSON_FIRSTNAME"},
    ]
    return anonymized_text_set_spans(text=text, spans=spans, expected_revision=1, user=None)


def post(draft: AnonymizedText, **data) -> None:
    client = Client()
    client.force_login(draft.description.study.owner)
    draft.refresh_from_db()
    url = reverse("researcher-review-text", args=[draft.description.study.slug, draft.pk])
    client.post(url, {"revision": draft.revision, **data})
    draft.refresh_from_db()


def test_changing_a_span_category_re_renders_with_a_new_placeholder(draft):
    post(draft, action="set_category", index=2, category="LOCATION")
    assert draft.text.startswith("PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 grew up in LOCATION_1.")


def test_unmasking_one_occurrence_keeps_the_others(draft):
    post(draft, action="remove_span", index=3)
    assert "Later Ottilie moved" in draft.text
    assert draft.text.startswith("PERSON_FIRSTNAME_1 ")


def test_unmasking_every_occurrence_of_a_string(draft):
    post(draft, action="remove_same", index=0)
    assert draft.text.count("Ottilie") == 2


def test_moving_a_boundary_to_cover_more_words(draft):
    post(draft, action="remove_span", index=1)
    post(draft, action="set_bounds", index=0, start=0, end=14)
    assert draft.spans[0]["text"] == "Ottilie Brandt"
    assert draft.text.startswith("PERSON_FIRSTNAME_1 grew up")


def test_a_boundary_overlapping_another_span_is_refused(draft):
    before = draft.revision
    post(draft, action="set_bounds", index=0, start=0, end=20)
    assert draft.revision == before


def test_masking_only_the_selected_occurrence(draft):
    post(draft, action="add_range", start=58, end=64, category="LOCATION")
    assert "to LOCATION_1 with" in draft.text
    assert "Lisbon" not in draft.text


def test_marking_reviewed_and_any_edit_clears_it(draft):
    post(draft, action="mark_reviewed")
    assert draft.reviewed_at is not None
    post(draft, action="add_range", start=58, end=64, category="LOCATION")
    assert draft.reviewed_at is None


def test_a_text_with_a_leak_warning_is_released_only_with_the_box_ticked():
    study = make_study()
    target = make_target(study=study, name="Nell Ashby")
    text = AnonymizedText.objects.create(
        description=make_description(study=study, target=target, text="Nell Ashby sails."),
        text="Nell PERSON_LASTNAME_1 sails.",
    )
    post(text, action="release")
    assert text.status == "draft"
    post(text, action="release", confirm_leak="1")
    assert text.status == "released"


def test_bulk_release_of_reviewed_drafts_only_after_confirming(draft):
    study = draft.description.study
    clean = AnonymizedText.objects.create(
        description=make_description(study=study, text="A quiet fisherman."), text="A quiet one."
    )
    post(clean, action="mark_reviewed")
    other = AnonymizedText.objects.create(
        description=make_description(study=study, text="A loud fisherman."), text="A loud one."
    )
    client = Client()
    client.force_login(study.owner)
    url = reverse("researcher-release", args=[study.slug])
    page = client.post(url, {"scope": "reviewed"}).content.decode()
    assert "<strong>1</strong> draft will be released" in page
    assert AnonymizedText.objects.filter(status="released").count() == 0
    client.post(url, {"scope": "reviewed", "confirmed": "1"})
    assert list(AnonymizedText.objects.filter(status="released")) == [clean]
    other.refresh_from_db()
    assert other.status == "draft"


def test_viewers_see_the_editor_but_cannot_post(draft):
    study = draft.description.study
    viewer = make_member(study=study)
    client = Client()
    client.force_login(viewer)
    url = reverse("researcher-review-text", args=[study.slug, draft.pk])
    assert client.get(url).status_code == 200
    response = client.post(url, {"action": "remove_span", "index": 0, "revision": draft.revision})
    assert response.status_code == 403


@pytest.mark.parametrize(
    ("query", "expected"), [("lisbon", 1), ("ottilie brandt", 1), ("harbour", 0), ("", 2)]
)
def test_search_finds_texts_by_words_and_target(draft, query, expected):
    study = draft.description.study
    AnonymizedText.objects.create(
        description=make_description(study=study, text="A quiet fisherman."), text="A quiet one."
    )
    client = Client()
    client.force_login(study.owner)
    rows = client.get(reverse("researcher-review", args=[study.slug]), {"q": query}).context["rows"]
    assert len(rows) == expected


def test_filter_unreviewed_and_reviewed(draft):
    study = draft.description.study
    client = Client()
    client.force_login(study.owner)
    url = reverse("researcher-review", args=[study.slug])
    assert len(client.get(url, {"status": "unreviewed"}).context["rows"]) == 1
    post(draft, action="mark_reviewed")
    assert len(client.get(url, {"status": "unreviewed"}).context["rows"]) == 0
    assert len(client.get(url, {"status": "reviewed"}).context["rows"]) == 1

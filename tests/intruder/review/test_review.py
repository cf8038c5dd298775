"""Reviewing anonymized texts: span edits re-render, stale edits are refused, release gates."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from intruder.models import AnonymizedText
from intruder.selectors import leak_checks
from intruder.selectors.leak_checks import leak_warnings
from intruder.selectors.participant import intruder_text_pool
from intruder.services import anonymization
from intruder.services.review import (
    SpanEditError,
    StaleRevisionError,
    StatusError,
    anonymized_text_set_spans,
    anonymized_text_set_status,
    anonymized_text_set_text,
    anonymized_texts_release,
    spans_with_string,
    spans_without,
)
from tests.intruder.factories import make_description, make_study, make_target, make_user

pytestmark = pytest.mark.django_db

ORIGINAL = "Ottilie Brandt grew up in Marsden. Later Ottilie moved to Lisbon with her dog Pim."


def span(start: int, end: int, category: str = "PERSON_FIRSTNAME") -> dict:
    return {"start": start, "end": end, "category": category, "placeholder": "", "score": 0.9}


@pytest.fixture
def draft() -> AnonymizedText:
    """A model draft that masked 'Ottilie' (first mention) and 'Marsden', missing the rest."""
    study = make_study()
    target = make_target(study=study, name="Ottilie Brandt", aliases=["Tilly"])
    description = make_description(study=study, target=target, text=ORIGINAL)
    text = AnonymizedText.objects.create(
        description=description, method="textwash-model", text="placeholder", spans=[]
    )
    return anonymized_text_set_spans(
        text=text,
        spans=[span(0, 7), span(26, 33, "LOCATION")],
        expected_revision=1,
        user=study.owner,
    )


def test_setting_spans_re_renders_the_text_and_bumps_the_revision(draft) -> None:
    assert draft.text == (
        "PERSON_FIRSTNAME_1 Brandt grew up in LOCATION_1. Later Ottilie moved to Lisbon "
        "with her dog Pim."
    )
    assert draft.revision == 2
    assert [s["text"] for s in draft.spans] == ["Ottilie", "Marsden"]


def test_target_name_left_in_the_text_is_flagged(draft) -> None:
    assert leak_warnings(draft) == [
        "target name still present: 'Ottilie'",
        "target name still present: 'Brandt'",
    ]


@pytest.mark.parametrize(
    ("names", "parts"),
    [
        (["Ottilie Brandt"], ["Ottilie Brandt", "Ottilie", "Brandt"]),
        (["Jo Okafor-Smythe"], ["Jo Okafor-Smythe", "Okafor", "Smythe"]),
        (["Dame Odette"], ["Dame Odette", "Odette"]),
        (["", "  "], []),
    ],
)
def test_name_parts_are_what_a_leak_check_looks_for(names: list[str], parts: list[str]) -> None:
    assert sorted(leak_checks.name_parts(names)) == sorted(parts)


def test_masking_a_string_masks_every_unmasked_occurrence(draft) -> None:
    spans = spans_with_string(ORIGINAL, draft.spans, "ottilie", "PERSON_FIRSTNAME")
    spans = spans_with_string(ORIGINAL, spans, "Brandt", "PERSON_LASTNAME")
    text = anonymized_text_set_spans(
        text=draft, spans=spans, expected_revision=draft.revision, user=None
    )
    assert text.text == (
        "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 grew up in LOCATION_1. Later PERSON_FIRSTNAME_1 "
        "moved to Lisbon with her dog Pim."
    )
    assert leak_warnings(text) == []


def test_removing_a_span_unmasks_it(draft) -> None:
    text = anonymized_text_set_spans(
        text=draft, spans=spans_without(draft.spans, 1), expected_revision=2, user=None
    )
    assert "Marsden" in text.text
    assert [s["text"] for s in text.spans] == ["Ottilie"]


def test_stale_revision_is_refused_and_the_newer_edit_is_kept(draft) -> None:
    first = spans_with_string(ORIGINAL, draft.spans, "Lisbon", "LOCATION")
    anonymized_text_set_spans(text=draft, spans=first, expected_revision=2, user=None)
    second = spans_without(draft.spans, 0)
    with pytest.raises(StaleRevisionError):
        anonymized_text_set_spans(text=draft, spans=second, expected_revision=2, user=None)
    draft.refresh_from_db()
    assert draft.revision == 3
    assert "Lisbon" not in draft.text
    assert draft.text.startswith("PERSON_FIRSTNAME_1")


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ([span(0, 200)], "outside the text"),
        ([span(0, 7), span(3, 10)], "overlaps"),
        ([span(0, 7, "SHOE_SIZE")], "unknown category"),
        ([span(5, 5)], "outside the text"),
    ],
)
def test_invalid_spans_are_refused(draft, spans: list[dict], message: str) -> None:
    with pytest.raises(SpanEditError, match=message):
        anonymized_text_set_spans(text=draft, spans=spans, expected_revision=2, user=None)
    draft.refresh_from_db()
    assert draft.revision == 2


def test_masking_a_string_that_is_not_there_is_refused(draft) -> None:
    with pytest.raises(SpanEditError, match="does not occur"):
        spans_with_string(ORIGINAL, draft.spans, "Marsden", "LOCATION")


def test_released_text_cannot_be_edited(draft) -> None:
    anonymized_text_set_status(text=draft, status="released", user=None)
    with pytest.raises(StatusError):
        anonymized_text_set_spans(text=draft, spans=[], expected_revision=2, user=None)


def test_status_moves_draft_released_withdrawn_draft(draft) -> None:
    for status in ("released", "withdrawn", "draft"):
        draft = anonymized_text_set_status(text=draft, status=status, user=None)
        assert draft.status == status
    with pytest.raises(StatusError):
        anonymized_text_set_status(text=draft, status="withdrawn", user=None)


def test_release_with_a_stale_revision_is_refused(draft) -> None:
    with pytest.raises(StaleRevisionError):
        anonymized_text_set_status(text=draft, status="released", user=None, expected_revision=1)
    draft.refresh_from_db()
    assert draft.status == "draft"


def test_only_released_texts_are_served_to_intruders(draft) -> None:
    study = draft.description.study
    assert not intruder_text_pool(study=study).exists()
    anonymized_text_set_status(text=draft, status="released", user=None)
    assert list(intruder_text_pool(study=study)) == [draft]


def test_bulk_release_holds_back_texts_that_leak_the_name(draft) -> None:
    study = draft.description.study
    clean_description = make_description(study=study, text="A quiet fisherman from the coast.")
    clean = AnonymizedText.objects.create(
        description=clean_description, method="textwash-model", text="A quiet fisherman."
    )
    released, held = anonymized_texts_release(
        texts=AnonymizedText.objects.filter(description__study=study), user=None
    )
    assert (released, held) == (1, [draft.pk])
    clean.refresh_from_db()
    draft.refresh_from_db()
    assert (clean.status, draft.status) == ("released", "draft")
    released, held = anonymized_texts_release(
        texts=AnonymizedText.objects.filter(pk=draft.pk), user=None, include_flagged=True
    )
    assert (released, held) == (1, [])


def test_imported_text_without_spans_is_edited_as_text_not_re_rendered() -> None:
    study = make_study()
    description = make_description(study=study, text=ORIGINAL)
    text = AnonymizedText.objects.create(
        description=description, method="textwash-original", text="PERSON_FIRSTNAME_1 grew up."
    )
    with pytest.raises(SpanEditError, match="edit its text"):
        anonymized_text_set_spans(text=text, spans=[span(0, 7)], expected_revision=1, user=None)
    text = anonymized_text_set_text(
        text=text, new_text="PERSON_FIRSTNAME_1 grew up somewhere.", expected_revision=1, user=None
    )
    assert (text.text, text.revision) == ("PERSON_FIRSTNAME_1 grew up somewhere.", 2)
    with pytest.raises(StaleRevisionError):
        anonymized_text_set_text(text=text, new_text="x", expected_revision=1, user=None)


def review_url(text: AnonymizedText) -> str:
    slug = text.description.study.slug
    return reverse("researcher-review-text", kwargs={"slug": slug, "pk": text.pk})


def test_review_page_shows_original_beside_anonymized_with_leak_warning(draft) -> None:
    client = Client()
    client.force_login(draft.description.study.owner)
    body = client.get(review_url(draft)).content.decode()
    assert "Leak: target name still present: &#x27;Ottilie&#x27;" in body
    assert '<a class="span" href="#span-0" data-index="0" data-start="0" data-end="7"' in body
    assert '<span class="placeholder">LOCATION_1</span>' in body


def test_review_page_escapes_text_from_the_original() -> None:
    study = make_study()
    description = make_description(study=study, text="<script>alert(1)</script> Nell Ashby")
    text = AnonymizedText.objects.create(
        description=description, text="<b>bold</b> PERSON_FIRSTNAME_1", spans=[]
    )
    client = Client()
    client.force_login(study.owner)
    body = client.get(review_url(text)).content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<b>bold</b>" not in body


def test_reviewer_fixes_a_leak_and_releases_through_the_page(draft) -> None:
    editor = make_user()
    draft.description.study.members.create(user=editor, role="editor")
    client = Client()
    client.force_login(editor)
    url = review_url(draft)
    for needle, category in (("Ottilie", "PERSON_FIRSTNAME"), ("Brandt", "PERSON_LASTNAME")):
        draft.refresh_from_db()
        client.post(
            url,
            {
                "action": "add_span",
                "needle": needle,
                "category": category,
                "whole_words": "1",
                "revision": draft.revision,
            },
        )
    draft.refresh_from_db()
    assert leak_warnings(draft) == []
    assert draft.reviewed_by == editor
    client.post(url, {"action": "release", "revision": draft.revision})
    draft.refresh_from_db()
    assert draft.status == "released"


def test_stale_form_post_shows_an_error_and_changes_nothing(draft) -> None:
    client = Client()
    client.force_login(draft.description.study.owner)
    response = client.post(
        review_url(draft), {"action": "remove_span", "index": 0, "revision": 1}, follow=True
    )
    assert "Not saved" in response.content.decode()
    draft.refresh_from_db()
    assert (draft.revision, len(draft.spans)) == (2, 2)


def test_review_list_flags_leaking_drafts(draft) -> None:
    client = Client()
    client.force_login(draft.description.study.owner)
    slug = draft.description.study.slug
    body = client.get(reverse("researcher-review", kwargs={"slug": slug})).content.decode()
    assert "1 draft has a leak warning" in body


def test_bulk_release_page_reports_held_back_texts(draft) -> None:
    client = Client()
    client.force_login(draft.description.study.owner)
    slug = draft.description.study.slug
    url = reverse("researcher-release", kwargs={"slug": slug})
    confirm = client.post(url, {"scope": "all"})
    body = confirm.content.decode()
    assert "<strong>1</strong> draft with a leak warning will stay drafts" in body
    draft.refresh_from_db()
    assert draft.status == "draft"  # the first post only asks
    response = client.post(url, {"scope": "all", "confirmed": "1"}, follow=True)
    assert "Held back 1 draft" in response.content.decode()


def test_categories_come_from_the_anonymize_library() -> None:
    assert "PERSON_LASTNAME" in anonymization.categories()


def test_review_list_filters_drafts_flagged_for_a_leak(draft) -> None:
    study = draft.description.study
    clean = AnonymizedText.objects.create(
        description=make_description(study=study, text="A quiet fisherman."),
        method="textwash-model",
        text="A quiet fisherman.",
    )
    client = Client()
    client.force_login(study.owner)
    url = reverse("researcher-review", kwargs={"slug": study.slug})
    flagged = client.get(url, {"status": "flagged"}).context["rows"]
    assert [row["text"].pk for row in flagged] == [draft.pk]
    every = client.get(url).context["rows"]
    assert [row["text"].pk for row in every] == [draft.pk, clean.pk]

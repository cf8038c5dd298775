"""Review of anonymized texts: span edits, reviewed marks, leak warnings and release.

A researcher edits the spans of a draft (re-rendered through the `anonymization` adapter,
guarded by optimistic locking on `revision`), sees what the leak checks find, and releases
reviewed texts to intruders; a withdrawn text is taken back from the intruders holding it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from intruder.exceptions import IntruderError
from intruder.models import AnonymizedText
from intruder.selectors.leak_checks import blocking_leaks
from intruder.services.anonymization import MODEL_METHOD, categories, render_spans, span_to_dict
from intruder.services.assignment import assignments_release_withdrawn


class StaleRevisionError(IntruderError):
    """The text changed since the editor loaded it; the edit is refused, nothing is lost."""

    status_code = 409
    api_field = "expected_revision"


class SpanEditError(IntruderError):
    """An edit that would produce invalid spans (out of range, overlapping, unknown category)."""

    api_field = "spans"


class StatusError(IntruderError):
    """A status change the text's current status does not allow."""

    api_field = "status"


class ReleasedTextEditError(StatusError):
    """An edit of a released text: withdraw it first (answered as a refused edit)."""

    api_field = "spans"


def validate_spans(original: str, spans: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the spans sorted, each checked against the original; raise SpanEditError."""
    known = set(categories())
    cleaned = sorted((span_to_dict(s) for s in spans), key=lambda s: (s["start"], s["end"]))
    previous_end = 0
    for span in cleaned:
        if not 0 <= span["start"] < span["end"] <= len(original):
            raise SpanEditError(f"span {span['start']}-{span['end']} lies outside the text")
        if span["start"] < previous_end:
            raise SpanEditError(f"span {span['start']}-{span['end']} overlaps another span")
        if span["category"] not in known:
            raise SpanEditError(f"unknown category {span['category']!r}")
        span["text"] = original[span["start"] : span["end"]]
        previous_end = span["end"]
    return cleaned


def anonymized_text_set_spans(
    *, text: AnonymizedText, spans: Sequence[dict[str, Any]], expected_revision: int, user: Any
) -> AnonymizedText:
    """Replace a draft's spans and re-render its text, refusing a stale revision."""
    if text.status == AnonymizedText.Status.RELEASED:
        raise ReleasedTextEditError("a released text cannot be edited; withdraw it first")
    if not text.spans and text.text != text.description.text and text.method != MODEL_METHOD:
        # Rendering from spans would drop the masking of an imported span-less text.
        raise SpanEditError("this imported text has no spans: edit its text instead")
    original = text.description.text
    rendered, rendered_spans = render_spans(original, validate_spans(original, spans))
    return _anonymized_text_update(
        text=text,
        expected_revision=expected_revision,
        user=user,
        text_value=rendered,
        spans=rendered_spans,
    )


def anonymized_text_set_text(
    *, text: AnonymizedText, new_text: str, expected_revision: int, user: Any
) -> AnonymizedText:
    """Replace the text of a span-less draft (imported texts), refusing a stale revision.

    Texts with spans are edited through their spans so text and spans never disagree.
    """
    if text.status == AnonymizedText.Status.RELEASED:
        raise ReleasedTextEditError("a released text cannot be edited; withdraw it first")
    if text.spans:
        raise SpanEditError("this text has spans: edit the spans instead")
    if not new_text.strip():
        raise SpanEditError("the text must not be empty")
    return _anonymized_text_update(
        text=text, expected_revision=expected_revision, user=user, text_value=new_text
    )


def _anonymized_text_update(
    *, text: AnonymizedText, expected_revision: int, user: Any, text_value: str, **fields: Any
) -> AnonymizedText:
    """Store an edit if the text is still at `expected_revision` (optimistic locking).

    The conditional UPDATE bumps the revision, so of two researchers editing the same
    revision exactly one wins and the other gets StaleRevisionError instead of overwriting.
    """
    updated = AnonymizedText.objects.filter(
        pk=text.pk, revision=expected_revision, status=text.status
    ).update(
        text=text_value,
        revision=F("revision") + 1,
        reviewed_by=user,
        # A changed text must be looked at again before it counts as reviewed.
        reviewed_at=None,
        updated_at=timezone.now(),
        **fields,
    )
    return _stored_unless_stale(text, updated, expected_revision, "reload and redo the edit")


def _stored_unless_stale(
    text: AnonymizedText, updated: int, expected_revision: int, retry_hint: str
) -> AnonymizedText:
    """Return the text as stored after a conditional UPDATE at `expected_revision`.

    `updated` is the UPDATE's row count: 0 means another researcher changed the text first.
    """
    if not updated:
        raise StaleRevisionError(
            f"text {text.pk} changed since revision {expected_revision}; {retry_hint}"
        )
    text.refresh_from_db()
    return text


def _check_span_number(spans: Sequence[dict[str, Any]], index: int) -> None:
    if not 0 <= index < len(spans):
        raise SpanEditError(f"no span number {index}")


def _check_category(category: str) -> None:
    if category not in categories():
        raise SpanEditError(f"unknown category {category!r}")


def _check_stretch(original: str, start: int, end: int) -> None:
    if not 0 <= start < end <= len(original):
        raise SpanEditError(f"{start}-{end} is not a stretch of the original text")


def spans_without(spans: Sequence[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    """Return the spans with the one at `index` removed (unmask just that occurrence)."""
    _check_span_number(spans, index)
    return [s for i, s in enumerate(spans) if i != index]


def spans_without_same(spans: Sequence[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    """Return the spans without every span of the same text as the one at `index`."""
    _check_span_number(spans, index)
    same = spans[index]["text"].casefold()
    return [s for s in spans if s["text"].casefold() != same]


def spans_with_category(
    spans: Sequence[dict[str, Any]], index: int, category: str
) -> list[dict[str, Any]]:
    """Return the spans with the one at `index` given another category."""
    _check_span_number(spans, index)
    _check_category(category)
    changed = [dict(s) for s in spans]
    changed[index].update(category=category, placeholder="")
    return changed


def spans_with_bounds(
    original: str, spans: Sequence[dict[str, Any]], index: int, start: int, end: int
) -> list[dict[str, Any]]:
    """Return the spans with the one at `index` moved to cover original[start:end]."""
    _check_span_number(spans, index)
    _check_stretch(original, start, end)
    changed = [dict(s) for s in spans]
    changed[index].update(start=start, end=end, text=original[start:end], placeholder="")
    return changed


def spans_with_range(
    original: str, spans: Sequence[dict[str, Any]], start: int, end: int, category: str
) -> list[dict[str, Any]]:
    """Return the spans plus one covering original[start:end] (mask just this occurrence)."""
    _check_stretch(original, start, end)
    _check_category(category)
    return [*spans, {"start": start, "end": end, "category": category, "score": 1.0}]


def anonymized_text_mark_reviewed(
    *, text: AnonymizedText, user: Any, expected_revision: int, reviewed: bool = True
) -> AnonymizedText:
    """Mark the text as reviewed (or not) at the revision the reviewer saw."""
    updated = AnonymizedText.objects.filter(pk=text.pk, revision=expected_revision).update(
        reviewed_at=timezone.now() if reviewed else None,
        reviewed_by=user,
        updated_at=timezone.now(),
    )
    return _stored_unless_stale(text, updated, expected_revision, "look at it again")


def spans_with_string(
    original: str,
    spans: Sequence[dict[str, Any]],
    needle: str,
    category: str,
    *,
    whole_words: bool = True,
) -> list[dict[str, Any]]:
    """Return the spans plus one span per occurrence of `needle` (case-insensitive).

    Occurrences overlapping an existing span are left as they are.
    """
    needle = needle.strip()
    if not needle:
        raise SpanEditError("enter the text to mask")
    _check_category(category)
    pattern = re.escape(needle)
    if whole_words:
        pattern = rf"(?<!\w){pattern}(?!\w)"
    existing = [(s["start"], s["end"]) for s in spans]
    added = [
        {"start": m.start(), "end": m.end(), "category": category, "score": 1.0}
        for m in re.finditer(pattern, original, flags=re.IGNORECASE)
        if not any(m.start() < end and start < m.end() for start, end in existing)
    ]
    if not added:
        raise SpanEditError(f"{needle!r} does not occur unmasked in the original")
    return [*spans, *added]


def anonymized_text_set_status(
    *, text: AnonymizedText, status: str, user: Any, expected_revision: int | None = None
) -> AnonymizedText:
    """Release a draft, withdraw a released text, or reopen a withdrawn one as a draft."""
    allowed = {
        AnonymizedText.Status.RELEASED: AnonymizedText.Status.DRAFT,
        AnonymizedText.Status.WITHDRAWN: AnonymizedText.Status.RELEASED,
        AnonymizedText.Status.DRAFT: AnonymizedText.Status.WITHDRAWN,
    }
    if status not in allowed:
        raise StatusError(f"unknown status {status!r}")
    rows = AnonymizedText.objects.filter(pk=text.pk, status=allowed[status])
    if expected_revision is not None:
        rows = rows.filter(revision=expected_revision)
    with transaction.atomic():
        changed = rows.update(status=status, reviewed_by=user, updated_at=timezone.now())
        if changed and status == AnonymizedText.Status.WITHDRAWN:
            # Intruders holding the text stop seeing it: their next page gives the next text.
            assignments_release_withdrawn(text_id=text.pk)
    if not changed:
        text.refresh_from_db()
        if expected_revision is not None and text.revision != expected_revision:
            raise StaleRevisionError(f"text {text.pk} changed since you loaded it; reload")
        raise StatusError(f"cannot change a {text.status} text to {status}")
    text.refresh_from_db()
    return text


def release_plan(
    *, texts: QuerySet[AnonymizedText], include_flagged: bool = False, reviewed_only: bool = False
) -> tuple[list[AnonymizedText], list[AnonymizedText], int]:
    """Return (drafts to release, drafts held back for a leak, drafts left as not reviewed)."""
    drafts = texts.filter(status=AnonymizedText.Status.DRAFT).select_related("description__target")
    unreviewed = 0
    if reviewed_only:
        unreviewed = drafts.filter(reviewed_at__isnull=True).count()
        drafts = drafts.filter(reviewed_at__isnull=False)
    release, held = [], []
    for text in drafts:
        (held if not include_flagged and blocking_leaks(text) else release).append(text)
    return release, held, unreviewed


def anonymized_texts_release(
    *,
    texts: QuerySet[AnonymizedText],
    user: Any,
    include_flagged: bool = False,
    reviewed_only: bool = False,
) -> tuple[int, list[int]]:
    """Release the drafts among `texts`, holding back those with blocking leak warnings
    (and, with `reviewed_only`, those nobody marked reviewed).

    Return how many were released and the ids held back for a leak.
    """
    released = 0
    held_back: list[int] = []
    drafts = texts.filter(status=AnonymizedText.Status.DRAFT).select_related("description__target")
    if reviewed_only:
        drafts = drafts.filter(reviewed_at__isnull=False)
    for text in drafts:
        if not include_flagged and blocking_leaks(text):
            held_back.append(text.pk)
            continue
        released += AnonymizedText.objects.filter(
            pk=text.pk, status=AnonymizedText.Status.DRAFT, revision=text.revision
        ).update(status=AnonymizedText.Status.RELEASED, reviewed_by=user, updated_at=timezone.now())
    return released, held_back

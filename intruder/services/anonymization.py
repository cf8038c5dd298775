"""Adapter to the `anonymize` library: the single place the Django side calls it.

Batch-anonymizes a study's descriptions (one AnonymizedText per description, saved as it
goes so a crashed job resumes), lets a researcher edit the spans of a draft (re-rendered by
`anonymize.render`, guarded by optimistic locking on `revision`), flags leaks of the
target's name, and releases reviewed texts to intruders.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from intruder.models import AnonymizedText, Description, Study
from intruder.services.assignment import assignments_release_withdrawn
from intruder.services.leaks import BLOCKING_KINDS, text_leak_findings

MODEL_METHOD = "textwash-model"
ORIGINAL_TEXTWASH_METHOD = "textwash-original"

_anonymizer: Any = None
_anonymizer_lock = threading.Lock()


class StaleRevisionError(Exception):
    """The text changed since the editor loaded it; the edit is refused, nothing is lost."""


class SpanEditError(ValueError):
    """An edit that would produce invalid spans (out of range, overlapping, unknown category)."""


class StatusError(ValueError):
    """A status change the text's current status does not allow."""


def categories() -> tuple[str, ...]:
    """Return the categories a span may carry: the PSI types plus the risk guard's."""
    from anonymize.labels import SPAN_CATEGORIES

    return tuple(SPAN_CATEGORIES)


def get_anonymizer() -> Any:
    """Return this process's anonymizer, loading the shipped model on first use only."""
    global _anonymizer
    if _anonymizer is None:
        with _anonymizer_lock:
            if _anonymizer is None:
                from anonymize import Anonymizer

                # None = the shipped model; a folder of one's own trained model otherwise.
                _anonymizer = Anonymizer.load(settings.INTRUDER_ANONYMIZER_MODEL or None)
    return _anonymizer


def set_anonymizer(anonymizer: Any) -> Any:
    """Install an anonymizer (tests use a fake with the same interface); return the previous."""
    global _anonymizer
    previous, _anonymizer = _anonymizer, anonymizer
    return previous


def span_to_dict(span: Any) -> dict[str, Any]:
    """Return a span (anonymize.Span or dict) as the JSON dict stored on AnonymizedText."""
    data = span if isinstance(span, dict) else dataclasses.asdict(span)
    return {
        "start": int(data["start"]),
        "end": int(data["end"]),
        "text": str(data.get("text", "")),
        "category": str(data["category"]),
        "placeholder": str(data.get("placeholder", "")),
        "score": None if data.get("score") is None else float(data["score"]),
    }


def render_spans(original: str, spans: Sequence[dict[str, Any]]) -> tuple[str, list[dict]]:
    """Rebuild the anonymized text of `original` from spans with `anonymize.render`.

    Return the text and the spans with their re-numbered placeholders.
    """
    from anonymize import Span, render
    from anonymize.placeholders import assign_placeholders

    span_objects = [
        Span(
            start=s["start"],
            end=s["end"],
            text=original[s["start"] : s["end"]],
            category=s["category"],
            placeholder=s.get("placeholder", ""),
            score=1.0 if s.get("score") is None else float(s["score"]),
        )
        for s in spans
    ]
    rendered = render(original, span_objects)
    return rendered, [span_to_dict(s) for s in assign_placeholders(span_objects)]


def anonymize_study_descriptions(
    *,
    study: Study,
    progress: Callable[..., None],
    batch_size: int = 8,
    threshold: float | None = None,
    anonymizer: Any = None,
    method: str = MODEL_METHOD,
    model_dir: str | None = None,
) -> dict[str, Any]:
    """Anonymize the study's descriptions with the model, saving each text as it is made.

    Descriptions that already have an anonymization of `method` are skipped, so a retried job
    resumes where the crashed one stopped. A retrained model (`model_dir`) saves its texts
    under a method of its own, beside the earlier ones, for review and release.
    """
    if anonymizer is None and model_dir:
        from anonymize import Anonymizer

        anonymizer = Anonymizer.load(model_dir)
    anonymizer = anonymizer or get_anonymizer()
    descriptions = study.descriptions.order_by("id")
    total = descriptions.count()
    pending = list(descriptions.exclude(anonymizations__method=method))
    done = total - len(pending)
    skipped = done
    created = 0
    progress(done, total, "already anonymized")
    for start in range(0, len(pending), batch_size):
        batch = pending[start : start + batch_size]
        results = anonymizer.anonymize_many(
            [d.text for d in batch], batch_size=batch_size, **_threshold_kwargs(threshold)
        )
        for description, result in zip(batch, results, strict=True):
            if _save_model_anonymization(description, result, anonymizer.model_version, method):
                created += 1
        done += len(batch)
        progress(done, total, "anonymized")
    return {"created": created, "skipped": skipped, "total": total}


def _threshold_kwargs(threshold: float | None) -> dict[str, Any]:
    return {} if threshold is None else {"threshold": float(threshold)}


def _save_model_anonymization(
    description: Description, result: Any, model_version: str, method: str = MODEL_METHOD
) -> bool:
    """Store one result; return False when another attempt stored it first."""
    try:
        with transaction.atomic():
            AnonymizedText.objects.create(
                description=description,
                method=method,
                model_version=str(model_version)[:100],
                text=result.text,
                spans=[span_to_dict(s) for s in result.spans],
            )
    except IntegrityError:
        return False
    return True


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
        raise StatusError("a released text cannot be edited; withdraw it first")
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
        raise StatusError("a released text cannot be edited; withdraw it first")
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
    if not updated:
        raise StaleRevisionError(
            f"text {text.pk} changed since revision {expected_revision}; reload and redo the edit"
        )
    text.refresh_from_db()
    return text


def spans_without(spans: Sequence[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    """Return the spans with the one at `index` removed (unmask just that occurrence)."""
    if not 0 <= index < len(spans):
        raise SpanEditError(f"no span number {index}")
    return [s for i, s in enumerate(spans) if i != index]


def spans_without_same(spans: Sequence[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    """Return the spans without every span of the same text as the one at `index`."""
    if not 0 <= index < len(spans):
        raise SpanEditError(f"no span number {index}")
    same = spans[index]["text"].casefold()
    return [s for s in spans if s["text"].casefold() != same]


def spans_with_category(
    spans: Sequence[dict[str, Any]], index: int, category: str
) -> list[dict[str, Any]]:
    """Return the spans with the one at `index` given another category."""
    if not 0 <= index < len(spans):
        raise SpanEditError(f"no span number {index}")
    if category not in categories():
        raise SpanEditError(f"unknown category {category!r}")
    changed = [dict(s) for s in spans]
    changed[index].update(category=category, placeholder="")
    return changed


def spans_with_bounds(
    original: str, spans: Sequence[dict[str, Any]], index: int, start: int, end: int
) -> list[dict[str, Any]]:
    """Return the spans with the one at `index` moved to cover original[start:end]."""
    if not 0 <= index < len(spans):
        raise SpanEditError(f"no span number {index}")
    if not 0 <= start < end <= len(original):
        raise SpanEditError(f"{start}-{end} is not a stretch of the original text")
    changed = [dict(s) for s in spans]
    changed[index].update(start=start, end=end, text=original[start:end], placeholder="")
    return changed


def spans_with_range(
    original: str, spans: Sequence[dict[str, Any]], start: int, end: int, category: str
) -> list[dict[str, Any]]:
    """Return the spans plus one covering original[start:end] (mask just this occurrence)."""
    if not 0 <= start < end <= len(original):
        raise SpanEditError(f"{start}-{end} is not a stretch of the original text")
    if category not in categories():
        raise SpanEditError(f"unknown category {category!r}")
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
    if not updated:
        raise StaleRevisionError(
            f"text {text.pk} changed since revision {expected_revision}; look at it again"
        )
    text.refresh_from_db()
    return text


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
    if category not in categories():
        raise SpanEditError(f"unknown category {category!r}")
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


def leak_warnings(text: AnonymizedText) -> list[str]:
    """Return every possible leak the checks find in the text (`intruder.services.leaks`)."""
    return [finding.message for finding in text_leak_findings(text)]


def blocking_leaks(text: AnonymizedText) -> list[str]:
    """Return the leaks that hold a draft back from bulk release (name, glued, name kind)."""
    return [f.message for f in text_leak_findings(text) if f.kind in BLOCKING_KINDS]


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

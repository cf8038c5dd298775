"""Adapter to the `anonymize` tagger: where the Django side holds and runs the PSI model.

Holds this process's anonymizer (typed by `anonymize.TextAnonymizer`, which the tests' fake
implements too), batch-anonymizes a study's descriptions (one AnonymizedText per
description, saved as it goes so a crashed job resumes) and re-renders edited spans with
`anonymize.render`. Reviewing, editing and releasing the texts is `intruder.services.review`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, transaction

from intruder.models import AnonymizedText, Description, Job, Study
from intruder.services.jobs import job_start

if TYPE_CHECKING:
    from anonymize import AnonymizationResult, TextAnonymizer

MODEL_METHOD = "textwash-model"
ORIGINAL_TEXTWASH_METHOD = "textwash-original"

_anonymizer: TextAnonymizer | None = None
_anonymizer_lock = threading.Lock()


def categories() -> tuple[str, ...]:
    """Return the categories a span may carry: the PSI types plus the risk guard's."""
    from anonymize.labels import SPAN_CATEGORIES

    return tuple(SPAN_CATEGORIES)


def get_anonymizer() -> TextAnonymizer:
    """Return this process's anonymizer, loading the shipped model on first use only."""
    global _anonymizer
    if _anonymizer is None:
        with _anonymizer_lock:
            if _anonymizer is None:
                from anonymize import Anonymizer

                # None = the shipped model; a folder of one's own trained model otherwise.
                _anonymizer = Anonymizer.load(settings.INTRUDER_ANONYMIZER_MODEL or None)
    return _anonymizer


def set_anonymizer(anonymizer: TextAnonymizer | None) -> TextAnonymizer | None:
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

    span_objects = [Span.from_dict(s, original) for s in spans]
    rendered = render(original, span_objects)
    return rendered, [span_to_dict(s) for s in assign_placeholders(span_objects)]


def anonymize_study_descriptions(
    *,
    study: Study,
    progress: Callable[..., None],
    batch_size: int = 8,
    threshold: float | None = None,
    anonymizer: TextAnonymizer | None = None,
    method: str = MODEL_METHOD,
    model_dir: str | None = None,
) -> dict[str, Any]:
    """Anonymize the study's descriptions with the model, saving each text as it is made.

    Descriptions that already have an anonymization of `method` are skipped, so a retried job
    resumes where the crashed one stopped. A retrained model (`model_dir`) saves its texts
    under a method of its own, beside the earlier ones, for review and release.
    """
    # A description whose flags a researcher confirmed (pasted or machine-written) is
    # excluded before anonymization: it never becomes a text for intruders.
    descriptions = study.descriptions.exclude(flag_review=Description.Review.CONFIRMED).order_by(
        "id"
    )
    total = descriptions.count()
    pending = list(descriptions.exclude(anonymizations__method=method))
    done = total - len(pending)
    skipped = done
    created = 0
    # Loading the model takes seconds: the bar says so instead of sitting at 0/0.
    progress(done, total, "loading the anonymizer" if pending else "already anonymized")
    if anonymizer is None and model_dir:
        from anonymize import Anonymizer

        anonymizer = Anonymizer.load(model_dir)
    anonymizer = anonymizer or get_anonymizer()
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


def anonymization_job_start(
    *, study: Study, user: Any = None, params: dict[str, Any] | None = None
) -> tuple[Job, bool]:
    """Queue the study's anonymization unless one is queued or running; (job, created).

    `params` are those of `anonymize_study_descriptions` (batch_size, threshold, method,
    model_dir), or `llm_prompt` (see `intruder.llm_intruder.services`).
    """
    return job_start(kind=Job.Kind.ANONYMIZE_STUDY, study=study, params=params, created_by=user)


def _threshold_kwargs(threshold: float | None) -> dict[str, Any]:
    return {} if threshold is None else {"threshold": float(threshold)}


def _save_model_anonymization(
    description: Description,
    result: AnonymizationResult,
    model_version: str,
    method: str = MODEL_METHOD,
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

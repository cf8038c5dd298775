"""Evaluate an anonymizer against a project's annotations with TAB's metrics.

Systems: the project's anonymizer at any threshold (or a model folder of one's own, for
before/after comparisons), spaCy NER masking, or an uploaded TAB system-output file.
`evaluation_write` leaves in a folder what `manage.py evaluate_anonymizer` promises:
metrics.json (TAB's names), system_spans.json (TAB's system-output format), the tables as
CSV, and the gold file, so TAB's own script can be run on the same pair.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anonymize.annotations.formats import (
    read_system_output,
    system_output_to_json,
    tab_documents_to_json,
)
from anonymize.annotations.schema import AnnotatedDocument, category_for_scheme
from anonymize.annotations.tab_metrics import SystemSpan, TabScorer
from csv_safe import SafeDictWriter
from intruder.annotation.models import Project
from intruder.annotation.selectors import project_gold
from intruder.exceptions import IntruderError
from intruder.models import Job
from intruder.services.jobs import ACTIVE_STATUSES, job_enqueue

SUMMARY_KEYS = (
    "recall_direct_entities",
    "recall_quasi_entities",
    "recall_all_entities",
    "token_recall",
    "mention_recall",
    "token_precision",
    "weighted_token_precision",
    "mention_precision",
    "weighted_mention_precision",
    "token_f1",
)
# The model and spaCy run as this background job (seconds to minutes of model time); an
# uploaded system-output file is scored in the request (no model, well under a second).
# Texts per progress step: small enough that the bar moves every second or so.
PROGRESS_CHUNK = 8
Progress = Callable[..., None]


class EvaluationError(IntruderError):
    """The evaluation cannot run (no annotations, bad system file); worded for the user."""


@dataclass
class Evaluation:
    system: str
    gold: list[AnnotatedDocument]
    spans: dict[str, list[SystemSpan]]
    metrics: dict[str, Any]


def _in_chunks(
    texts: Sequence[str],
    spans_of: Callable[[list[str]], list[list[SystemSpan]]],
    progress: Progress | None,
    message: str,
) -> list[list[SystemSpan]]:
    """Run `spans_of` over the texts a chunk at a time, reporting progress after each."""
    found: list[list[SystemSpan]] = []
    for start in range(0, len(texts), PROGRESS_CHUNK):
        found += spans_of(list(texts[start : start + PROGRESS_CHUNK]))
        if progress is not None:
            progress(len(found), len(texts), message)
    return found


def _system_spans(
    project: Project,
    gold: list[AnnotatedDocument],
    system: str,
    threshold: float | None,
    model_dir: str | None,
    upload: bytes | None,
    progress: Progress | None = None,
) -> tuple[str, dict[str, list[SystemSpan]]]:
    texts = [d.text for d in gold]
    ids = [d.doc_id for d in gold]
    categories = tuple(project.categories)
    if system in ("model", "spacy") and progress is not None:
        progress(0, len(texts), f"loading {system}")
    if system == "model":
        from anonymize.annotations.systems import model_spans

        if model_dir:
            from anonymize import Anonymizer

            anonymizer = Anonymizer.load(model_dir)
        else:
            from intruder.services.anonymization import get_anonymizer

            anonymizer = get_anonymizer()
        if threshold is not None and not 0 <= threshold <= 1:
            raise EvaluationError(f"threshold must be in [0, 1], got {threshold}")
        found = _in_chunks(
            texts, lambda chunk: model_spans(anonymizer, chunk, threshold), progress, "anonymized"
        )
        used = threshold if threshold is not None else anonymizer.threshold
        name = f"model {anonymizer.model_version} @ threshold {used}"
    elif system == "spacy":
        import spacy

        from anonymize.annotations.systems import SPACY_MODEL, spacy_spans

        nlp = spacy.load(SPACY_MODEL, disable=["lemmatizer"])
        found = _in_chunks(texts, lambda chunk: spacy_spans(chunk, nlp), progress, "tagged")
        name = "spaCy NER (en_core_web_sm)"
    else:
        if upload is None:
            raise EvaluationError("choose model, spacy or a system-output file")
        try:
            pairs = read_system_output(upload, dict(zip(ids, texts, strict=True)))
        except ValueError as error:
            raise EvaluationError(f"{system}: {error}") from None
        return system, {i: [SystemSpan(s, e) for s, e in pairs.get(i, [])] for i in ids}
    spans = {
        doc_id: [
            SystemSpan(s.start, s.end, category_for_scheme(s.category, categories))
            for s in doc_spans
        ]
        for doc_id, doc_spans in zip(ids, found, strict=True)
    }
    return name, spans


def evaluate_project(
    *,
    project: Project,
    system: str,
    threshold: float | None = None,
    model_dir: str | None = None,
    upload: bytes | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    """Score a system on the project's submitted annotations."""
    gold = project_gold(project=project, include_adjudicated=False)
    if not gold:
        raise EvaluationError("no submitted annotations yet: nothing to evaluate against")
    name, spans = _system_spans(project, gold, system, threshold, model_dir, upload, progress)
    metrics = TabScorer(gold).evaluate(spans)
    metrics = {"system": name, "threshold": threshold, **metrics}
    return Evaluation(name, gold, spans, metrics)


def evaluation_job_start(
    *, project: Project, user: Any, system: str, threshold: float | None
) -> tuple[Any, bool]:
    """Queue an evaluation of the model or spaCy unless one of this project is active.

    Returns (job, created). The system runs in the worker, never in the request: the model
    takes seconds to load and a second or more per hundred texts.
    """
    if system not in ("model", "spacy"):
        raise EvaluationError("only the model and spaCy run as a job")
    if threshold is not None and not 0 <= threshold <= 1:
        raise EvaluationError(f"threshold must be in [0, 1], got {threshold}")
    if not project_gold(project=project, include_adjudicated=False):
        raise EvaluationError("no submitted annotations yet: nothing to evaluate against")
    active = evaluation_job_latest(project=project, active_only=True)
    if active is not None:
        return active, False
    params = {"project": project.pk, "system": system, "threshold": threshold}
    return job_enqueue(kind=Job.Kind.ANNOTATION_EVALUATE, params=params, created_by=user), True


def evaluation_job_latest(*, project: Project, active_only: bool = False) -> Any:
    """Return the project's newest evaluation job (or its active one), or None."""
    jobs = Job.objects.filter(kind=Job.Kind.ANNOTATION_EVALUATE, params__project=project.pk)
    if active_only:
        jobs = jobs.filter(status__in=ACTIVE_STATUSES)
    return jobs.order_by("-created_at", "-id").first()


def summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Return (metric, value) rows of the headline measures of an evaluation's metrics."""
    return [{"metric": key, "value": metrics[key]} for key in SUMMARY_KEYS]


def category_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Return per-category precision, recall and F1 rows of an evaluation's metrics."""
    return [
        {"category": category, **values} for category, values in metrics["per_category"].items()
    ]


def evaluation_write(evaluation: Evaluation, out: Path) -> list[Path]:
    """Write metrics.json, system_spans.json, gold_tab.json and the CSV tables to `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def dump(name: str, payload: Any) -> None:
        path = out / name
        path.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        written.append(path)

    dump("metrics.json", evaluation.metrics)
    pairs = {d: [(s.start, s.end) for s in spans] for d, spans in evaluation.spans.items()}
    dump("system_spans.json", system_output_to_json(pairs))
    dump("gold_tab.json", tab_documents_to_json(evaluation.gold))
    for name, rows in (
        ("summary.csv", summary_rows(evaluation.metrics)),
        ("per_category.csv", category_rows(evaluation.metrics)),
    ):
        path = out / name
        with path.open("w", newline="", encoding="utf-8") as sink:
            writer = SafeDictWriter(sink, fieldnames=list(rows[0]) if rows else ["metric"])
            writer.writeheader()
            writer.writerows(rows)
        written.append(path)
    return written

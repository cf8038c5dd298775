"""Analyses too slow for a web request, run as background jobs with progress.

Construct loss tags every original and anonymized text with spaCy three times (originals,
anonymized, anonymized with placeholders mapped), which takes minutes on a paper-sized study
and would pass gunicorn's 30 s timeout inside a request. The job stores its tables in
`Job.result`; the analysis page and its downloads read the latest successful run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from intruder.analysis import construct_loss as construct
from intruder.analysis.frames import AnalysisInputError
from intruder.analysis.report import records
from intruder.analysis.selectors import study_texts
from intruder.models import Job, Study
from intruder.services.jobs import job_start

CONSTRUCT_TABLES = ("construct_loss", "construct_loss_mapped")


def _json_safe(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return rows with infinite floats as None (PostgreSQL's jsonb has no Infinity).

    An infinite BF10 is recovered on reading from its finite `log10_bf10`.
    """
    return [
        {k: None if isinstance(v, float) and math.isinf(v) else v for k, v in row.items()}
        for row in rows
    ]


def construct_loss_compute(
    *, study: Study, progress: Callable[..., None], nlp: Any | None = None
) -> dict[str, Any]:
    """Return both construct loss tables of the study's texts as JSON-able records."""
    texts = study_texts(study)
    if texts.empty:
        raise AnalysisInputError(
            "no released or judged anonymized texts to compare with their originals"
        )
    n = len(texts)
    total = 3 * n
    progress(0, total, "loading the spaCy tagger")
    nlp = nlp or construct.load_pos_pipeline()

    def stage(offset: int, message: str) -> Callable[[int], None]:
        return lambda done: progress(offset + done, total, message)

    originals = construct.pos_frequencies(
        texts["original"].tolist(), nlp, progress=stage(0, "tagging the originals")
    )
    plain = construct.construct_loss(
        texts, nlp, original_frequencies=originals, progress=stage(n, "tagging anonymized texts")
    )
    mapped = construct.construct_loss(
        texts,
        nlp,
        map_placeholders=True,
        original_frequencies=originals,
        progress=stage(2 * n, "tagging anonymized texts, placeholders mapped"),
    )
    return {
        "n_texts": n,
        "tables": {
            "construct_loss": _json_safe(records(plain)),
            "construct_loss_mapped": _json_safe(records(mapped)),
        },
    }


def construct_loss_job_start(*, study: Study, user: Any) -> tuple[Job, bool]:
    """Queue a construct loss job unless one is queued or running; return (job, created)."""
    return job_start(kind=Job.Kind.CONSTRUCT_LOSS, study=study, created_by=user)


def construct_loss_latest(study: Study) -> tuple[Job | None, Job | None, dict[str, pd.DataFrame]]:
    """Return (newest job, newest successful job, its tables) of the study's construct loss."""
    runs = study.jobs.filter(kind=Job.Kind.CONSTRUCT_LOSS).order_by("-created_at", "-id")
    newest = runs.first()
    done = runs.filter(status=Job.Status.SUCCEEDED).first()
    tables: dict[str, pd.DataFrame] = {}
    if done is not None:
        for name, rows in (done.result.get("tables") or {}).items():
            frame = pd.DataFrame(rows, columns=construct.COLUMNS)
            bound = frame["bf10"].isna() & frame["log10_bf10"].notna()
            frame["bf10"] = frame["bf10"].astype(float).where(~bound, math.inf)
            tables[name] = frame
    return newest, done, tables

"""Reads for the risk report: attack results and human per-text results of a study as frames."""

from __future__ import annotations

from typing import Any

import pandas as pd

from intruder.analysis.per_text import per_text
from intruder.analysis.risk import RiskReport, build_report
from intruder.attack_methods import method_label
from intruder.models import AnonymizedText, AttackResult, AttackRun, Study
from intruder.selectors.analysis import study_judgments, study_texts

RESULT_COLUMNS = [
    "description_id",
    "anonymized_text_id",
    "method",
    "attack",
    "fold",
    "predicted_key",
    "true_rank",
    "true_prob",
    "masked_share",
    "target_key",
    "target_name",
    "group",
    "external_id",
]


def latest_run(study: Study, purpose: str = AttackRun.Purpose.REPORT) -> AttackRun | None:
    """Return the study's newest finished run of `purpose`, else its newest run of it."""
    runs = study.attack_runs.filter(purpose=purpose).select_related("job")
    finished = runs.filter(job__status="succeeded").first()
    return finished or runs.first()


def run_results(run: AttackRun) -> pd.DataFrame:
    """Return one row per stored result of `run`."""
    rows = [
        {
            "description_id": r.description_id,
            "anonymized_text_id": r.anonymized_text_id,
            "method": r.method,
            "attack": r.attack,
            "fold": r.fold,
            "predicted_key": r.predicted_key,
            "true_rank": r.true_rank,
            "true_prob": r.true_prob,
            "masked_share": r.masked_share,
            "target_key": r.description.target.key,
            "target_name": r.description.target.name,
            "group": r.description.target.group,
            "external_id": r.description.external_id or f"description-{r.description_id}",
        }
        for r in AttackResult.objects.filter(run=run)
        .select_related("description__target")
        .order_by("pk")
    ]
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    frame["true_rank"] = frame["true_rank"].astype("Float64")
    frame["true_prob"] = frame["true_prob"].astype(float)
    frame["masked_share"] = frame["masked_share"].astype(float)
    return frame


def human_texts(study: Study) -> pd.DataFrame:
    """Return the per-text human results of the study's judged texts, with their method."""
    texts = study_texts(study)
    judgments = study_judgments(study)
    if texts.empty or judgments.empty:
        return pd.DataFrame()
    table = per_text(judgments, texts, study.identification_threshold)
    methods = dict(
        AnonymizedText.objects.filter(pk__in=table["text_id"].tolist()).values_list("pk", "method")
    )
    descriptions = texts.set_index("text_id")["description_id"]
    table["method"] = table["text_id"].map(methods)
    table["description_id"] = table["text_id"].map(descriptions)
    return table


def run_report(run: AttackRun, *, human_method: str | None = None) -> RiskReport:
    """Build the human-vs-machine report of one attack run."""
    results = run_results(run)
    labels = {m: method_label(m) for m in run.methods}
    settings: dict[str, Any] = {
        "study": run.study.slug,
        "run": run.pk,
        "purpose": run.purpose,
        "attacks": run.attacks,
        "methods": run.methods,
        "background": run.background,
        "k": run.folds if run.background == AttackRun.Background.CROSS_VALIDATED else None,
        "seed": run.seed,
        "identification_threshold": run.study.identification_threshold,
        "created_at": run.created_at.isoformat(),
        "job_status": run.job.status if run.job else None,
    }
    report = build_report(
        results,
        human_texts=human_texts(run.study),
        human_method=human_method,
        settings=settings,
        labels=labels,
        seed=run.seed,
    )
    if run.job and run.job.status != "succeeded":
        report.warnings.insert(
            0, f"The run is {run.job.status} ({run.job.progress_done}/{run.job.progress_total})."
        )
    return report

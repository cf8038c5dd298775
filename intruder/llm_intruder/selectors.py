"""Read the open-world LLM intruder's results: one selector for the risk report, pages and API.

"Identified" is the human intruders' definition: the first name's character cosine to the
target's name or an alias reaches the study's threshold (`model_runtime.guess_scoring`).
Texts whose answer stayed unusable are counted apart, never as "not identified".
"""

from __future__ import annotations

from typing import Any

from intruder.models import Job, Study


def llm_prompt_choices() -> list[tuple[str, str]]:
    """Return (name, label) of paper 002's anonymization prompts, for forms."""
    from anonymize.llm_prompts import PROMPTS

    return [(prompt.name, prompt.label) for prompt in PROMPTS.values()]


def open_world_llm_results(study: Study) -> dict[str, Any] | None:
    """Return the latest LLM intruder job's rates per method (n, identified, %, 95 % CI).

    A running job's rows so far are returned with `complete` False; None when none ran.
    """
    from statsmodels.stats.proportion import proportion_confint

    job = (
        study.jobs.filter(kind=Job.Kind.LLM_INTRUDER_STUDY)
        .exclude(status=Job.Status.QUEUED)
        .order_by("-created_at", "-pk")
        .first()
    )
    if job is None:
        return None
    rows = [
        {
            "anonymized_text": guess.anonymized_text_id,
            "description": guess.anonymized_text.description_id,
            "target_key": guess.anonymized_text.description.target.key,
            "method": guess.anonymized_text.method,
            "guesses": guess.guesses,
            "cosine": guess.cosine,
            "identified": guess.identified,
            "named_other": guess.named_other,
            "matched_alias": guess.matched_alias,
            "error_reason": guess.error_reason,
        }
        for guess in job.llm_guesses.select_related(
            "anonymized_text__description__target"
        ).order_by("anonymized_text_id")
    ]
    if not rows:
        return None
    methods: dict[str, dict[str, Any]] = {}
    for method in sorted({row["method"] for row in rows}):
        mine = [row for row in rows if row["method"] == method]
        scored = [row for row in mine if not row["error_reason"]]
        n, hits = len(scored), sum(bool(row["identified"]) for row in scored)
        low, high = proportion_confint(hits, n, method="wilson") if n else (None, None)
        methods[method] = {
            "n": n,
            "identified": hits,
            "pct_identified": 100.0 * hits / n if n else None,
            "ci95_pct": [100.0 * low, 100.0 * high] if n else None,
            "failed": len(mine) - n,
            "named_other": sum(bool(row["named_other"]) for row in scored),
        }
    return {
        "job": job.pk,
        "complete": job.status == Job.Status.SUCCEEDED,
        "threshold": (job.result or {}).get("threshold"),
        "identification_rule": (job.result or {}).get(
            "identification_rule", study.identification_rule
        ),
        "llm": (job.result or {}).get("llm", {}),
        "methods": methods,
        "rows": rows,
    }

"""Registry of background job kinds: kind -> function(job, progress) -> result dict.

A job function reads its inputs from `job.params` / `job.study`, reports progress with
`progress(done, total, message="")`, writes its results incrementally (so a retry resumes)
and returns a small JSON-able summary stored in `job.result`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from intruder.models import Job

Progress = Callable[..., None]
TaskFunction = Callable[[Job, Progress], dict[str, Any] | None]

TASKS: dict[str, TaskFunction] = {}


class UnknownTaskError(KeyError):
    """No job function is registered under this kind."""


def register_task(kind: str) -> Callable[[TaskFunction], TaskFunction]:
    """Register the decorated function as the runner of jobs of `kind`."""

    def decorator(function: TaskFunction) -> TaskFunction:
        TASKS[kind] = function
        return function

    return decorator


def get_task(kind: str) -> TaskFunction:
    """Return the function registered for `kind`."""
    try:
        return TASKS[kind]
    except KeyError:
        raise UnknownTaskError(f"no job kind {kind!r}; known: {sorted(TASKS)}") from None


@register_task("anonymize_study")
def anonymize_study(job: Job, progress: Progress) -> dict[str, Any]:
    """Take new descriptions from the source studies, then anonymize every description of
    the job's study that has no model anonymization yet. With `llm_prompt` in the params,
    anonymize with that LLM prompt instead (`intruder.services.llm_jobs`)."""
    from intruder.services.anonymization import anonymize_study_descriptions
    from intruder.services.sources import descriptions_take_from_sources

    if job.study is None:
        raise ValueError("anonymize_study needs a study")
    if job.params.get("llm_prompt"):
        from intruder.services.llm_jobs import anonymize_study_with_llm

        return anonymize_study_with_llm(
            study=job.study, progress=progress, prompt=job.params["llm_prompt"]
        )
    taken = descriptions_take_from_sources(study=job.study)
    result = anonymize_study_descriptions(
        study=job.study,
        progress=progress,
        batch_size=int(job.params.get("batch_size", 8)),
        threshold=job.params.get("threshold"),
        **{k: job.params[k] for k in ("method", "model_dir") if job.params.get(k)},
    )
    return {**result, "taken_from_sources": taken.descriptions_created}


@register_task("construct_loss")
def construct_loss(job: Job, progress: Progress) -> dict[str, Any]:
    """Compute the construct loss tables (spaCy POS frequencies) of the job's study."""
    from intruder.services.analysis_jobs import construct_loss_compute

    if job.study is None:
        raise ValueError("construct_loss needs a study")
    return construct_loss_compute(study=job.study, progress=progress)


@register_task("attack_study")
def attack_study(job: Job, progress: Progress) -> dict[str, Any]:
    """Run an attack run's attacks on its study's texts, resuming from stored results."""
    from intruder.models import AttackRun
    from intruder.services.attack_runs import execute_attack_run_shared

    run = AttackRun.objects.select_related("study").get(pk=job.params["run"])
    return execute_attack_run_shared(run=run, job=job, progress=progress)


@register_task("attack_fold")
def attack_fold(job: Job, progress: Progress) -> dict[str, Any]:
    """Run one fold of an attack run (queued by the run's `attack_study` job)."""
    from intruder.models import AttackRun
    from intruder.services.attack_runs import execute_attack_run

    run = AttackRun.objects.select_related("study").get(pk=job.params["run"])
    return execute_attack_run(
        run=run, progress=progress, folds={int(job.params["fold"])}, finish=False
    )


@register_task("annotation_suggestions")
def annotation_suggestions(job: Job, progress: Progress) -> dict[str, Any]:
    """Pre-annotate an annotation project's new texts with the anonymizer (resumes: texts
    that have suggestions are skipped)."""
    from intruder.annotation.models import Project
    from intruder.annotation.services import suggestions_compute

    project = Project.objects.get(pk=job.params["project"])
    return {"documents": suggestions_compute(project=project, progress=progress)}


@register_task("annotation_evaluate")
def annotation_evaluate(job: Job, progress: Progress) -> dict[str, Any]:
    """Score the anonymizer or spaCy on an annotation project's submitted annotations; the
    result is the metrics the evaluate page shows (TAB's names)."""
    from intruder.annotation.evaluation import evaluate_project
    from intruder.annotation.models import Project

    project = Project.objects.get(pk=job.params["project"])
    evaluation = evaluate_project(
        project=project,
        system=job.params["system"],
        threshold=job.params.get("threshold"),
        progress=progress,
    )
    return evaluation.metrics


@register_task("risk_report_pdf")
def risk_report_pdf(job: Job, progress: Progress) -> dict[str, Any]:
    """Draw an attack run's risk report as a PDF and store it for the study's current data."""
    from intruder.models import AttackRun
    from intruder.services.report_files import report_pdf_make

    run = AttackRun.objects.select_related("study", "job").get(pk=job.params["run"])
    _, content = report_pdf_make(run=run, progress=progress)
    return {"run": run.pk, "bytes": len(content)}


@register_task("guard_study")
def guard_study(job: Job, progress: Progress) -> dict[str, Any]:
    """Mask the study's unreleased model anonymizations until the attacks rank the person >= k."""
    from intruder.services.guarding import guard_study_texts

    if job.study is None:
        raise ValueError("guard_study needs a study")
    params = job.params or {}
    return guard_study_texts(
        study=job.study,
        progress=progress,
        k=int(params.get("k", 5)),
        attacks=tuple(params.get("attacks", ("tfidf", "bm25"))),
        budget=float(params.get("budget", 0.3)),
        background=str(params.get("background", "cross_validated")),
        background_documents=params.get("background_documents") or None,
        folds=int(params.get("folds", 5)),
        # Rows so far, stored as they are made: the review page shows them while it runs.
        publish=lambda summary: Job.objects.filter(pk=job.pk).update(result=summary),
    )


@register_task("llm_intruder_study")
def llm_intruder_study(job: Job, progress: Progress) -> dict[str, Any]:
    """Let an LLM name the person of each anonymized text (open world), scored as humans are."""
    from intruder.services.llm_jobs import llm_intruder_run

    if job.study is None:
        raise ValueError("llm_intruder_study needs a study")
    return llm_intruder_run(
        job=job,
        progress=progress,
        publish=lambda summary: Job.objects.filter(pk=job.pk).update(result=summary),
    )

"""The runners of background job kinds: one per `Job.Kind`, registered in the queue.

A job function reads its inputs from `job.params` / `job.study`, reports progress with
`progress(done, total, message="")`, writes its results incrementally (so a retry resumes)
and returns a small JSON-able summary stored in `job.result`. The app imports this module
when it is ready; nothing else imports it, so the queue never depends on the services.
"""

from __future__ import annotations

import logging
from typing import Any

from intruder.analysis import services as analysis_jobs
from intruder.annotation import services as annotation
from intruder.annotation.evaluation import evaluate_project
from intruder.annotation.models import Project
from intruder.llm_intruder import services as llm_jobs
from intruder.models import Job
from intruder.reports import refresh as report_refresh
from intruder.risk import attack_runs, guarding
from intruder.risk.models import AttackRun, GuardRun
from intruder.risk.pages import RISK_HTML, RISK_PAGE
from intruder.risk.pdf import report_pdf_make
from intruder.services import anonymization, sources
from intruder.services.jobs import Progress, register_task

logger = logging.getLogger(__name__)


@register_task(Job.Kind.ANONYMIZE_STUDY)
def anonymize_study(job: Job, progress: Progress) -> dict[str, Any]:
    """Take new descriptions from the source studies, then anonymize every description of
    the job's study that has no model anonymization yet. With `llm_prompt` in the params,
    anonymize with that LLM prompt instead (`intruder.llm_intruder.services`)."""
    if job.study is None:
        raise ValueError("anonymize_study needs a study")
    if job.params.get("llm_prompt"):
        return llm_jobs.anonymize_study_with_llm(
            study=job.study, progress=progress, prompt=job.params["llm_prompt"]
        )
    taken = sources.descriptions_take_from_sources(study=job.study)
    result = anonymization.anonymize_study_descriptions(
        study=job.study,
        progress=progress,
        batch_size=int(job.params.get("batch_size", 8)),
        threshold=job.params.get("threshold"),
        **{k: job.params[k] for k in ("method", "model_dir") if job.params.get(k)},
    )
    return {**result, "taken_from_sources": taken.descriptions_created}


@register_task(Job.Kind.CONSTRUCT_LOSS)
def construct_loss(job: Job, progress: Progress) -> dict[str, Any]:
    """Compute the construct loss tables (spaCy POS frequencies) of the job's study."""
    if job.study is None:
        raise ValueError("construct_loss needs a study")
    return analysis_jobs.construct_loss_compute(study=job.study, progress=progress)


@register_task(Job.Kind.ATTACK_STUDY)
def attack_study(job: Job, progress: Progress) -> dict[str, Any]:
    """Run an attack run's attacks on its study's texts, resuming from stored results."""
    run = AttackRun.objects.select_related("study").get(pk=job.params["run"])
    summary = attack_runs.execute_attack_run_shared(run=run, job=job, progress=progress)
    # The researcher's next click is the run's report: have it stored before the job ends.
    done, total = summary.get("results", 0), summary.get("expected", 0)
    progress(done, total, "storing the risk report")
    try:
        for name in (RISK_PAGE, RISK_HTML):
            report_refresh.report_prepare(study=run.study, name=name, args=(run.pk,))
    except Exception:  # the run stands; the page computes the report and shows what failed
        logger.exception("attack run %s: its risk report could not be stored", run.pk)
    progress(done, total, "finished")  # the run list shows the last message
    return summary


@register_task(Job.Kind.ATTACK_FOLD)
def attack_fold(job: Job, progress: Progress) -> dict[str, Any]:
    """Run one fold of an attack run (queued by the run's `attack_study` job)."""
    run = AttackRun.objects.select_related("study").get(pk=job.params["run"])
    return attack_runs.execute_attack_run(
        run=run, progress=progress, fold_indices={int(job.params["fold"])}, finish=False
    )


@register_task(Job.Kind.ANNOTATION_SUGGESTIONS)
def annotation_suggestions(job: Job, progress: Progress) -> dict[str, Any]:
    """Pre-annotate an annotation project's new texts with the anonymizer (resumes: texts
    that have suggestions are skipped)."""
    project = Project.objects.get(pk=job.params["project"])
    return {"documents": annotation.suggestions_compute(project=project, progress=progress)}


@register_task(Job.Kind.ANNOTATION_EVALUATE)
def annotation_evaluate(job: Job, progress: Progress) -> dict[str, Any]:
    """Score the anonymizer or spaCy on an annotation project's submitted annotations; the
    result is the metrics the evaluate page shows (TAB's names)."""
    project = Project.objects.get(pk=job.params["project"])
    evaluation = evaluate_project(
        project=project,
        system=job.params["system"],
        threshold=job.params.get("threshold"),
        progress=progress,
    )
    return evaluation.metrics


@register_task(Job.Kind.RISK_REPORT_PDF)
def risk_report_pdf(job: Job, progress: Progress) -> dict[str, Any]:
    """Draw an attack run's risk report as a PDF and store it for the study's current data."""
    run = AttackRun.objects.select_related("study", "job").get(pk=job.params["run"])
    _, content = report_pdf_make(run=run, progress=progress)
    return {"run": run.pk, "bytes": len(content)}


@register_task(Job.Kind.REFRESH_REPORTS)
def refresh_reports(job: Job, progress: Progress) -> dict[str, Any]:
    """Recompute the report pages of the job's study (or annotation project) that a page
    found behind the data, and store them where every web process reads them."""
    return report_refresh.reports_refresh_job(job=job, progress=progress)


@register_task(Job.Kind.GUARD_STUDY)
def guard_study(job: Job, progress: Progress) -> dict[str, Any]:
    """Mask the study's unreleased model anonymizations until the attacks rank the person >= k,
    storing a row per text as made (the review page shows them while it runs); a retry
    resumes. The job's result is the run's counts."""
    run = GuardRun.objects.select_related("study").get(job=job)
    return guarding.execute_guard_run(run=run, progress=progress)


@register_task(Job.Kind.LLM_INTRUDER_STUDY)
def llm_intruder_study(job: Job, progress: Progress) -> dict[str, Any]:
    """Let an LLM name the person of each anonymized text (open world), scored as humans are."""
    if job.study is None:
        raise ValueError("llm_intruder_study needs a study")
    return llm_jobs.llm_intruder_run(job=job, progress=progress)


@register_task(Job.Kind.REHEARSE_STUDY)
def rehearse_study(job: Job, progress: Progress) -> dict[str, Any]:
    """Play the study with a simulated crowd on a throwaway copy and check its invariants
    (`intruder.rehearsal`); the result is the verdict the study page shows."""
    from intruder.rehearsal.launch import rehearsal_execute

    return rehearsal_execute(job=job, progress=progress)

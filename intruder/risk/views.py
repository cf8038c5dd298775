"""Risk pages: attack runs of a study, the human-vs-machine report and its downloads.

Login required; readers (owner, editor, viewer, superuser) see runs and reports, editors
start runs. A user without a role gets 404, as on every researcher page.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from intruder.exceptions import errors_as_messages
from intruder.models import Job, Study
from intruder.reports.models import ReportFile
from intruder.reports.refresh import page_report, report_current
from intruder.risk import attack_runs, pdf
from intruder.risk.forms import AttackRunForm
from intruder.risk.models import AttackRun
from intruder.risk.pages import RISK_HTML, RISK_PAGE
from intruder.risk.rendering import summary_json, table_csv, table_json
from intruder.risk.report.tables import RISK_TABLE_TITLES
from intruder.risk.selectors import latest_run
from intruder.selectors.access import role_can_edit
from intruder.selectors.jobs import no_worker_note
from intruder.web.access import study_for
from intruder.web.job_messages import job_start_message


def _run_for(study: Study, run_id: Any) -> AttackRun:
    try:
        return study.attack_runs.select_related("job").get(pk=int(run_id))
    except (TypeError, ValueError, AttackRun.DoesNotExist):
        raise Http404("no such attack run") from None


@login_required
@require_GET
def risk_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Show the study's attack runs, the form for a new one and the selected run's report."""
    study, role = study_for(request, slug)
    run_id = request.GET.get("run")
    run = _run_for(study, run_id) if run_id else latest_run(study)
    context: dict[str, Any] = {
        "study": study,
        "can_edit": role_can_edit(role),
        "runs": study.attack_runs.select_related("job")[:20],
        "run": run,
        "form": AttackRunForm(study=study),
        "table_links": f"{run.pk}/" if run else "",
    }
    if run is not None and run.results.exists():
        # Seconds of statistics and plots: stored per data version, refreshed by a job.
        shown = page_report(study=study, name=RISK_PAGE, args=(run.pk,), user=request.user)
        context |= {**shown.value, "shown": shown}
        pdf_job = pdf.report_pdf_job(run)
        if pdf_job is not None:
            pdf_job.waiting_note = no_worker_note(pdf_job)
        context |= {
            "pdf_file": pdf.report_pdf_current(run),
            "pdf_job": pdf_job,
            "pdf_jobs": [pdf_job] if pdf_job and pdf_job.status != Job.Status.SUCCEEDED else [],
        }
    return render(request, "risk/risk_page.html", context)


@login_required
@require_POST
def risk_pdf_start(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    """Queue the PDF of a run's report (seconds of drawing); the page shows its progress.

    Queuing work on the study's workers is an editor's action; a viewer downloads the PDF an
    editor made (and, as for every risk action, is not told the action exists).
    """
    study, _ = study_for(request, slug, edit=True, hide_from_readers=True)
    run = _run_for(study, run_id)
    job, created = pdf.report_pdf_job_start(run=run, user=request.user)
    job_start_message(request, job=job, created=created, name="PDF")
    return redirect(f"{reverse('risk-page', args=[study.slug])}?run={run.pk}#report")


@login_required
@require_POST
@errors_as_messages("risk-page")
def risk_run_start(request: HttpRequest, slug: str) -> HttpResponse:
    """Start an attack run from the form; errors come back as messages after a redirect."""
    # A viewer is not told that the action exists: 404, as without a role.
    study, _ = study_for(request, slug, edit=True, hide_from_readers=True)
    form = AttackRunForm(request.POST, request.FILES, study=study)
    if not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
        return redirect("risk-page", slug=study.slug)
    data = form.cleaned_data
    run = attack_runs.attack_run_start(
        study=study,
        user=request.user,
        attacks=data["attacks"],
        methods=data["methods"],
        background=data["background"],
        background_documents=data["documents"],
        distractor_documents=data["distractors"],
        folds=data["folds"],
        seed=data["seed"],
        knowledge_budget=data.get("knowledge_budget"),
        budget_resamples=data.get("budget_resamples"),
    )
    messages.success(request, f"Attack run {run.pk} queued as job {run.job_id}.")
    return redirect(f"{reverse('risk-page', args=[study.slug])}?run={run.pk}")


def _risk_check_next(request: HttpRequest, slug: str) -> str:
    """Where the risk check's form leads: back to the review page or to the study page."""
    name = "researcher-review" if request.POST.get("next") == "review" else "researcher-study"
    return reverse(name, args=[slug])


@login_required
@require_POST
@errors_as_messages(_risk_check_next)
def risk_check_start(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue the pre-release risk check; back to the review page or the study page."""
    # A viewer is not told that the action exists: 404, as without a role.
    study, _ = study_for(request, slug, edit=True, hide_from_readers=True)
    run = attack_runs.risk_check_start(study=study, user=request.user)
    messages.success(
        request,
        f"Risk check {run.pk} queued as job {run.job_id}; flags appear on the review page "
        "as results come in.",
    )
    return redirect(_risk_check_next(request, study.slug))


@login_required
@require_GET
def risk_download(request: HttpRequest, slug: str, run_id: int, name: str) -> HttpResponse:
    """Download a run's report: report.html, report.pdf, summary.json or a table as CSV/JSON."""
    study, _ = study_for(request, slug)
    run = _run_for(study, run_id)
    stem, _, fmt = name.rpartition(".")
    filename = f"{study.slug}-risk-{run.pk}-{name}"
    if name == pdf.PDF_NAME:
        stored = pdf.report_pdf_current(run)
        if stored is not None:
            content = ReportFile.objects.values_list("content", flat=True).get(pk=stored.pk)
        else:  # a direct download (the page queues a job): drawn now, and kept
            _, content = pdf.report_pdf_make(run=run)
        response = HttpResponse(bytes(content), content_type="application/pdf")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    if name == "report.html":
        # Stored beside the report for every process; drawn here only for new data.
        html = report_current(study, RISK_HTML, (run.pk,))
        response = HttpResponse(html, content_type="text/html")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    report = pdf.cached_run_report(run)
    if name == "summary.json":
        response = HttpResponse(summary_json(report), content_type="application/json")
    elif stem in RISK_TABLE_TITLES and fmt in ("csv", "json"):
        if stem not in report.tables:
            raise Http404("this run's data do not support that table")
        if fmt == "csv":
            response = HttpResponse(table_csv(report, stem), content_type="text/csv")
        else:
            response = HttpResponse(table_json(report, stem), content_type="application/json")
    else:
        raise Http404("no such download")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response

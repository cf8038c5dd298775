"""Study pages (login required): the list, create and edit, import, anonymization jobs, export.

Access (`intruder.web.access.study_for`): superusers and the study's owner can do
everything, editors can change the study, viewers can only read. Anonymous users are sent to
the login page; a logged-in user without a role on a study gets 404 (its existence is not
revealed), a viewer who tries to change it gets 403. Review and release live in
`review`, members/clone/archive in `manage`, monitoring in `monitor`; flagged answers are
answer evidence's (`intruder.evidence.views`), the LLM jobs' actions the LLM intruder's
(`intruder.llm_intruder.views`), and packages' parts of this page come through `parts`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from intruder.enrolment import entry_link
from intruder.evidence.flags import exclusion_rules_locked
from intruder.exceptions import errors_as_messages
from intruder.exchange import exports, imports
from intruder.models import Job, Study
from intruder.prolific.claims import claims_pending
from intruder.selectors.access import (
    owns_study_less_job,
    role_can_edit,
    studies_visible_to,
    study_role,
)
from intruder.selectors.counts import count_by
from intruder.selectors.jobs import job_status, study_jobs
from intruder.selectors.linked import studies_linked
from intruder.selectors.monitoring import study_is_full, study_progress
from intruder.selectors.participant import GroupReach, intruder_group_reach
from intruder.selectors.persons import study_name_collisions
from intruder.services import jobs, studies
from intruder.services.anonymization import anonymization_job_start
from intruder.services.sources import (
    descriptions_take_from_sources,
    pending_source_descriptions,
    study_sources_set,
)
from intruder.views.researcher.forms import ImportForm, StudyEditForm, StudyForm
from intruder.views.researcher.parts import study_parts
from intruder.web.access import study_for
from intruder.web.job_messages import job_start_message


@login_required
@require_GET
def study_list(request: HttpRequest) -> HttpResponse:
    """List the studies the researcher can see, with live progress."""
    visible = studies_visible_to(request.user).select_related("owner")
    rows = [
        {"study": study, "progress": study_progress(study), "full": study_is_full(study)}
        for study in visible.filter(archived_at__isnull=True)
    ]
    archived = list(visible.filter(archived_at__isnull=False).order_by("-archived_at"))
    return render(request, "researcher/study_list.html", {"rows": rows, "archived": archived})


@login_required
@require_GET
def progress_json(request: HttpRequest) -> JsonResponse:
    """Return the progress of every visible study (polled by the study list)."""
    return JsonResponse({"studies": [study_progress(s) for s in studies_visible_to(request.user)]})


def _create_initial(request: HttpRequest) -> dict[str, Any]:
    """Return initial values from the query string (?kind=intruder&source=SLUG)."""
    initial: dict[str, Any] = {}
    if request.GET.get("kind") in Study.Kind.values:
        initial["kind"] = request.GET["kind"]
    source = Study.objects.filter(slug=request.GET.get("source", "")).first()
    if source is not None and study_role(request.user, source) is not None:
        initial["source_studies"] = [source]
        initial["kind"] = Study.Kind.INTRUDER
    return initial


def _claim_note(request: HttpRequest, study: Study) -> None:
    """Say which typed-in Prolific study IDs await a site administrator's approval."""
    for claim in claims_pending(study):
        messages.warning(
            request,
            f"Prolific study {claim.prolific_study_id} is asked for, not yet held: the API "
            "token opens every study of the workspace, so a site administrator approves an ID "
            "typed in by hand (creating the draft from the Prolific page needs no approval).",
        )


@login_required
@require_http_methods(["GET", "POST"])
def study_create(request: HttpRequest) -> HttpResponse:
    """Create a study owned by the current user."""
    form = StudyForm(request.POST or None, user=request.user, initial=_create_initial(request))
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        sources = data.pop("source_studies", [])
        try:
            with transaction.atomic():
                study = studies.study_create(owner=request.user, **data)
                study_sources_set(study=study, sources=sources)
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            messages.success(request, f"Study “{study.title}” created.")
            _claim_note(request, study)
            return redirect("researcher-study", slug=study.slug)
    return render(request, "researcher/study_form.html", {"form": form, "study": None})


@login_required
@require_http_methods(["GET", "POST"])
def study_edit(request: HttpRequest, slug: str) -> HttpResponse:
    """Change a study's settings (owners and editors)."""
    study, _ = study_for(request, slug, edit=True)
    form = StudyEditForm(request.POST or None, instance=study, user=request.user)
    if request.method == "POST" and form.is_valid():
        changes = {name: form.cleaned_data[name] for name in studies.EDITABLE_FIELDS}
        study.refresh_from_db()
        opened = not study.is_open
        try:
            with transaction.atomic():
                studies.study_update(study=study, **changes)
                study_sources_set(study=study, sources=form.cleaned_data["source_studies"])
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            messages.success(request, "Study settings saved.")
            _claim_note(request, study)
            if opened and study.is_open and rules_unrecorded(study):
                messages.warning(
                    request,
                    "The study is open with the default exclusion rules: none were recorded. "
                    "They lock when the first participant starts; record them now under "
                    "Flagged answers.",
                )
            return redirect("researcher-study", slug=study.slug)
    return render(
        request,
        "researcher/study_form.html",
        {
            "form": form,
            "study": study,
            "reach_short": reach_shortfalls(study),
            "name_collisions": study_name_collisions(study)
            if study.kind == Study.Kind.INTRUDER
            else [],
            "rules_locked": exclusion_rules_locked(study),
        },
    )


def rules_unrecorded(study: Study) -> bool:
    """Return whether the study still runs on default exclusion rules that can change."""
    return study.exclusion_rules_set_at is None and not exclusion_rules_locked(study)


@login_required
@require_GET
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Show a study: settings, progress, import, anonymization jobs, review, export."""
    study, role = study_for(request, slug)
    entry = request.build_absolute_uri(reverse("participant-entry", kwargs={"slug": study.slug}))
    recent_jobs = study_jobs(study)
    context = {
        "study": study,
        "role": role,
        "can_edit": role_can_edit(role),
        "progress": study_progress(study),
        "jobs": recent_jobs,
        # Shown at the top too, where the page opens after starting one.
        "active_jobs": [j for j in recent_jobs if j.status in jobs.ACTIVE_STATUSES],
        "import_form": ImportForm(),
        "entry_url": entry_link(entry),
        "full": study_is_full(study),
        "tables": list(exports.TABLES),
        "sources": [
            {"study": source, "taken": study.descriptions.filter(source__study=source).count()}
            for source in study.source_studies.order_by("title")
        ],
        "pending_from_sources": pending_source_descriptions(study).count(),
        "fed_studies": [s for s in study.fed_studies.all() if study_role(request.user, s)],
        **_linked_context(study, request.user),
        **study_parts(request, study, role_can_edit(role)),
        "targets_by_group": count_by(study.targets.all(), "group"),
        "reach_short": reach_shortfalls(study),
        "name_collisions": study_name_collisions(study)
        if study.kind == Study.Kind.INTRUDER
        else [],
        "rules_locked": exclusion_rules_locked(study),
    }
    return render(request, "researcher/study_detail.html", context)


def reach_shortfalls(study: Study) -> list[GroupReach]:
    """Return the groups whose intruders cannot get the announced number of texts."""
    if study.kind != Study.Kind.INTRUDER:
        return []
    return [reach for reach in intruder_group_reach(study=study) if reach.short]


def _linked_context(study: Study, user: Any) -> dict[str, Any]:
    """Return the linked studies the user may see, and how many others exist (not named)."""
    linked = studies_linked(study=study)
    visible = list(linked.filter(pk__in=studies_visible_to(user).values("pk")))
    return {"linked_studies": visible, "linked_hidden": linked.count() - len(visible)}


@login_required
@require_POST
def study_import(request: HttpRequest, slug: str) -> HttpResponse:
    """Import an uploaded CSV/JSONL file; on any error show every error and write nothing."""
    study, _ = study_for(request, slug, edit=True)
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, " ".join(form.errors.get("file", [])))
        return redirect("researcher-study", slug=study.slug)
    upload = form.cleaned_data["file"]
    try:
        fmt = imports.detect_format(upload.name)
        tally = imports.import_study_data(study=study, content=upload.read(), fmt=fmt)
    except imports.ImportValidationError as exc:
        return render(
            request,
            "researcher/import_errors.html",
            {"study": study, "errors": exc.errors, "filename": upload.name},
            status=exc.status_code,
        )
    messages.success(
        request,
        f"Imported {tally.descriptions_created} descriptions, {tally.targets_created} new "
        f"targets ({tally.targets_reused} existing reused), {tally.anonymized_created} "
        "anonymized texts.",
    )
    return redirect("researcher-study", slug=study.slug)


@login_required
@require_POST
@errors_as_messages("researcher-study", prefix="Nothing taken: ")
def study_take_from_sources(request: HttpRequest, slug: str) -> HttpResponse:
    """Copy the source collection studies' new descriptions into this intruder study."""
    study, _ = study_for(request, slug, edit=True)
    tally = descriptions_take_from_sources(study=study)
    messages.success(
        request,
        f"Took {tally.descriptions_created} description(s) from the source studies "
        f"({tally.targets_created} new target(s)). Anonymize them next.",
    )
    return redirect("researcher-study", slug=study.slug)


@login_required
@require_POST
def study_anonymize(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a background job that anonymizes the study's descriptions with the model."""
    study, _ = study_for(request, slug, edit=True)
    job, created = anonymization_job_start(study=study, user=request.user)
    job_start_message(
        request,
        job=job,
        created=created,
        name="Anonymization",
        queued="a worker (manage.py run_worker) runs it",
    )
    return redirect("researcher-study", slug=study.slug)


def _job_for(request: HttpRequest, pk: int, *, edit: bool = False) -> Job:
    job = get_object_or_404(Job.objects.select_related("study"), pk=pk)
    if job.study is None:
        if not owns_study_less_job(request.user, job):
            raise Http404("no such job")
        return job
    study_for(request, job.study.slug, edit=edit)
    return job


@login_required
@require_GET
def job_status_json(request: HttpRequest, pk: int) -> JsonResponse:
    """Return a job's status and progress (polled by the progress bar)."""
    return JsonResponse(job_status(_job_for(request, pk)))


def _job_action(request: HttpRequest, pk: int, action: Any, done: str) -> HttpResponse:
    """Apply a job service (retry, cancel) for an editor and go back to the job's page."""
    job = _job_for(request, pk, edit=True)
    try:
        action(job=job)
    except jobs.JobError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Job {job.pk} {done}.")
    if job.study is None:
        return redirect("researcher-studies")
    return redirect("researcher-study", slug=job.study.slug)


@login_required
@require_POST
def job_retry(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue a failed job again; it resumes from the results already stored."""
    return _job_action(request, pk, jobs.job_retry, "queued again")


@login_required
@require_POST
def job_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Cancel a queued or running job (what it stored so far stays)."""
    return _job_action(request, pk, jobs.job_cancel, "cancelled")


@login_required
@require_GET
def export_table(request: HttpRequest, slug: str, table: str, fmt: str) -> HttpResponse:
    """Download one table of the study as CSV or JSONL."""
    study, _ = study_for(request, slug)
    if table not in exports.TABLES or fmt not in exports.FORMATS:
        raise Http404("no such export")
    content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
    response = HttpResponse(
        exports.render_table(study, table, fmt), content_type=f"{content_type}; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{study.slug}_{table}.{fmt}"'
    return response

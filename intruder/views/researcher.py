"""Researcher pages (login required): studies, import, anonymization jobs, review, export.

Access: superusers and the study's owner can do everything, editors can change the study,
viewers can only read. Anonymous users are sent to the login page; a logged-in user without
a role on a study gets 404 (its existence is not revealed), a viewer who tries to change it
gets 403.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from intruder.models import AnonymizedText, Job, PersonGroup, Study
from intruder.selectors.researcher import (
    FLAGGED,
    job_status,
    review_texts,
    studies_visible_to,
    study_jobs,
    study_progress,
    study_role,
)
from intruder.services import anonymization, exports, imports, jobs, studies

REVIEW_PAGE_SIZE = 50
PLACEHOLDER_PATTERN = re.compile(r"\b(?:[A-Z]+(?:_[A-Z]+)*_\d+|PRONOUN|MR/MS|TITLE)\b")


def _study_for(request: HttpRequest, slug: str, *, edit: bool = False) -> tuple[Study, str]:
    """Return the study and the user's role; 404 without a role, 403 for a read-only role."""
    study = get_object_or_404(Study, slug=slug)
    role = study_role(request.user, study)
    if role is None:
        raise Http404("no such study")
    if edit and role not in ("owner", "editor"):
        raise PermissionDenied("viewers cannot change this study")
    return study, role


def _can_edit(role: str) -> bool:
    return role in ("owner", "editor")


class StudyForm(forms.ModelForm):
    """Study settings; groups are picked from the three person groups."""

    groups = forms.MultipleChoiceField(
        choices=PersonGroup.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Groups whose texts intruders see (none ticked = all).",
    )

    class Meta:
        model = Study
        fields = ["slug", *studies.EDITABLE_FIELDS]
        widgets = {
            "consent_text": forms.Textarea(attrs={"rows": 5}),
            "instructions_text": forms.Textarea(attrs={"rows": 5}),
            "debrief_text": forms.Textarea(attrs={"rows": 5}),
        }


class StudyEditForm(StudyForm):
    class Meta(StudyForm.Meta):
        fields = list(studies.EDITABLE_FIELDS)


class ImportForm(forms.Form):
    file = forms.FileField(help_text="CSV or JSONL (.csv, .jsonl); see the README for fields.")


@login_required
@require_GET
def study_list(request: HttpRequest) -> HttpResponse:
    """List the studies the researcher can see, with live progress."""
    rows = [
        {"study": study, "progress": study_progress(study)}
        for study in studies_visible_to(request.user).select_related("owner")
    ]
    return render(request, "researcher/study_list.html", {"rows": rows})


@login_required
@require_GET
def progress_json(request: HttpRequest) -> JsonResponse:
    """Return the progress of every visible study (polled by the study list)."""
    return JsonResponse({"studies": [study_progress(s) for s in studies_visible_to(request.user)]})


@login_required
@require_http_methods(["GET", "POST"])
def study_create(request: HttpRequest) -> HttpResponse:
    """Create a study owned by the current user."""
    form = StudyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        try:
            study = studies.study_create(owner=request.user, **data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, f"Study “{study.title}” created.")
            return redirect("researcher-study", slug=study.slug)
    return render(request, "researcher/study_form.html", {"form": form, "study": None})


@login_required
@require_http_methods(["GET", "POST"])
def study_edit(request: HttpRequest, slug: str) -> HttpResponse:
    """Change a study's settings (owners and editors)."""
    study, _ = _study_for(request, slug, edit=True)
    form = StudyEditForm(request.POST or None, instance=study)
    if request.method == "POST" and form.is_valid():
        changes = {name: form.cleaned_data[name] for name in studies.EDITABLE_FIELDS}
        study.refresh_from_db()
        try:
            studies.study_update(study=study, **changes)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, "Study settings saved.")
            return redirect("researcher-study", slug=study.slug)
    return render(request, "researcher/study_form.html", {"form": form, "study": study})


@login_required
@require_GET
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Show a study: settings, progress, import, anonymization jobs, review, export."""
    study, role = _study_for(request, slug)
    entry = request.build_absolute_uri(reverse("participant-entry", kwargs={"slug": study.slug}))
    context = {
        "study": study,
        "role": role,
        "can_edit": _can_edit(role),
        "progress": study_progress(study),
        "jobs": study_jobs(study),
        "import_form": ImportForm(),
        "entry_url": f"{entry}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        f"&SESSION_ID={{{{%SESSION_ID%}}}}",
        "example_entry_url": f"{entry}?PROLIFIC_PID=TEST{study.pk:04d}&STUDY_ID=demo&SESSION_ID=s1",
        "tables": list(exports.TABLES),
        "targets_by_group": dict(
            study.targets.order_by()
            .values("group")
            .annotate(n=Count("id"))
            .values_list("group", "n")
        ),
    }
    return render(request, "researcher/study_detail.html", context)


@login_required
@require_POST
def study_import(request: HttpRequest, slug: str) -> HttpResponse:
    """Import an uploaded CSV/JSONL file; on any error show every error and write nothing."""
    study, _ = _study_for(request, slug, edit=True)
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a CSV or JSONL file to import.")
        return redirect("researcher-study", slug=study.slug)
    upload = form.cleaned_data["file"]
    try:
        fmt = imports.detect_format(upload.name)
        report = imports.import_study_data(study=study, content=upload.read(), fmt=fmt)
    except imports.ImportValidationError as exc:
        return render(
            request,
            "researcher/import_errors.html",
            {"study": study, "errors": exc.errors, "filename": upload.name},
            status=400,
        )
    messages.success(
        request,
        f"Imported {report.descriptions_created} descriptions, {report.targets_created} new "
        f"targets ({report.targets_reused} existing reused), {report.anonymized_created} "
        "Textwash texts.",
    )
    return redirect("researcher-study", slug=study.slug)


@login_required
@require_POST
def study_anonymize(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a background job that anonymizes the study's descriptions with the model."""
    study, _ = _study_for(request, slug, edit=True)
    running = study.jobs.filter(
        kind="anonymize_study", status__in=[Job.Status.QUEUED, Job.Status.RUNNING]
    ).first()
    if running is not None:
        messages.info(request, f"Anonymization job {running.pk} is already {running.status}.")
    else:
        job = jobs.job_enqueue(kind="anonymize_study", study=study, created_by=request.user)
        messages.success(
            request,
            f"Anonymization job {job.pk} queued; a worker (manage.py run_worker) runs it.",
        )
    return redirect("researcher-study", slug=study.slug)


class GuardForm(forms.Form):
    """Settings of a "make texts k-anonymous against the machine" job."""

    k = forms.IntegerField(min_value=2, max_value=1000, initial=5)
    budget = forms.FloatField(min_value=0.01, max_value=1.0, initial=0.3)


@login_required
@require_POST
def study_guard(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a job that masks what lets the machine attacks rank each draft's person."""
    study, _ = _study_for(request, slug, edit=True)
    form = GuardForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(f"{field}: {' '.join(e)}" for field, e in form.errors.items())
        messages.error(request, f"Not queued: {errors}")
        return redirect("researcher-review", slug=study.slug)
    running = study.jobs.filter(
        kind="guard_study", status__in=[Job.Status.QUEUED, Job.Status.RUNNING]
    ).first()
    if running is not None:
        messages.info(request, f"Guard job {running.pk} is already {running.status}.")
    else:
        job = jobs.job_enqueue(
            kind="guard_study",
            study=study,
            created_by=request.user,
            params={"k": form.cleaned_data["k"], "budget": form.cleaned_data["budget"]},
        )
        messages.success(request, f"Guard job {job.pk} queued; a worker runs it.")
    return redirect("researcher-review", slug=study.slug)


def _job_for(request: HttpRequest, pk: int, *, edit: bool = False) -> Job:
    job = get_object_or_404(Job.objects.select_related("study"), pk=pk)
    if job.study is None:
        if not request.user.is_superuser:
            raise Http404("no such job")
        return job
    _study_for(request, job.study.slug, edit=edit)
    return job


@login_required
@require_GET
def job_status_json(request: HttpRequest, pk: int) -> JsonResponse:
    """Return a job's status and progress (polled by the progress bar)."""
    return JsonResponse(job_status(_job_for(request, pk)))


@login_required
@require_POST
def job_retry(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue a failed job again; it resumes from the results already stored."""
    job = _job_for(request, pk, edit=True)
    try:
        jobs.job_retry(job=job)
    except jobs.JobError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Job {job.pk} queued again.")
    if job.study is None:
        return redirect("researcher-studies")
    return redirect("researcher-study", slug=job.study.slug)


@login_required
@require_GET
def review_list(request: HttpRequest, slug: str) -> HttpResponse:
    """List the study's anonymized texts with their status and leak warnings."""
    study, role = _study_for(request, slug)
    status = request.GET.get("status", "")
    texts = review_texts(study, status)
    page_arg = request.GET.get("page", "1")
    page = max(1, int(page_arg)) if page_arg.isdigit() else 1
    total = len(texts)
    page_texts = texts[(page - 1) * REVIEW_PAGE_SIZE : page * REVIEW_PAGE_SIZE]
    guard_job = study.jobs.filter(kind="guard_study").order_by("-created_at").first()
    guarded = {}
    if guard_job is not None and guard_job.status == Job.Status.SUCCEEDED:
        for row in (guard_job.result or {}).get("texts", []):
            ranks = [
                (attack, before, row["rank_after"].get(attack))
                for attack, before in row["rank_before"].items()
            ]
            guarded[row["text_id"]] = {**row, "ranks": ranks}
    rows = [
        {"text": t, "warnings": anonymization.leak_warnings(t), "guard": guarded.get(t.pk)}
        for t in page_texts
    ]
    flagged = len(review_texts(study, FLAGGED))
    return render(
        request,
        "researcher/review_list.html",
        {
            "study": study,
            "can_edit": _can_edit(role),
            "rows": rows,
            "status": status,
            "statuses": AnonymizedText.Status.choices,
            "page": page,
            "has_next": page * REVIEW_PAGE_SIZE < total,
            "total": total,
            "flagged_drafts": flagged,
            "guard_job": guard_job,
            "guard_form": GuardForm(),
        },
    )


def highlight_original(original: str, spans: list[dict[str, Any]]) -> SafeString:
    """Return the original text, escaped, with each span marked and numbered."""
    cursor = 0
    pieces = []
    for index, span in enumerate(sorted(spans, key=lambda s: s["start"])):
        start, end = span["start"], span["end"]
        if start < cursor:
            continue
        pieces.append(format_html("{}", original[cursor:start]))
        pieces.append(
            format_html(
                '<mark class="span" title="{} (#{})">{}<sup>{}</sup></mark>',
                span["category"],
                index,
                original[start:end],
                span.get("placeholder") or span["category"],
            )
        )
        cursor = end
    pieces.append(format_html("{}", original[cursor:]))
    return format_html_join("", "{}", ((p,) for p in pieces))


def highlight_anonymized(text: str) -> SafeString:
    """Return the anonymized text, escaped, with its placeholders marked."""
    pieces = []
    cursor = 0
    for match in PLACEHOLDER_PATTERN.finditer(text):
        pieces.append(format_html("{}", text[cursor : match.start()]))
        pieces.append(format_html('<span class="placeholder">{}</span>', match.group()))
        cursor = match.end()
    pieces.append(format_html("{}", text[cursor:]))
    return format_html_join("", "{}", ((p,) for p in pieces))


@login_required
@require_http_methods(["GET", "POST"])
def review_text(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Review one anonymized text beside its original; editors fix spans and release it."""
    study, role = _study_for(request, slug, edit=request.method == "POST")
    text = get_object_or_404(
        AnonymizedText.objects.select_related("description__target"),
        pk=pk,
        description__study=study,
    )
    if request.method == "POST":
        return _review_action(request, study, text)
    siblings = list(
        AnonymizedText.objects.filter(description__study=study)
        .order_by("description_id", "method")
        .values_list("pk", flat=True)
    )
    position = siblings.index(text.pk)
    context = {
        "study": study,
        "can_edit": _can_edit(role),
        "text": text,
        "original": text.description.text,
        "original_html": highlight_original(text.description.text, text.spans),
        "anonymized_html": highlight_anonymized(text.text),
        "spans": list(enumerate(text.spans)),
        "warnings": anonymization.leak_warnings(text),
        "categories": anonymization.categories(),
        "editable": text.status != AnonymizedText.Status.RELEASED,
        "prev_pk": siblings[position - 1] if position > 0 else None,
        "next_pk": siblings[position + 1] if position + 1 < len(siblings) else None,
        "position": position + 1,
        "count": len(siblings),
    }
    return render(request, "researcher/review_text.html", context)


def _review_action(request: HttpRequest, study: Study, text: AnonymizedText) -> HttpResponse:
    """Apply one review action (unmask, mask a string, edit text, release, withdraw, reopen)."""
    action = request.POST.get("action", "")
    try:
        revision = int(request.POST.get("revision", ""))
    except ValueError:
        messages.error(request, "The form is missing its revision; reload the page.")
        return redirect("researcher-review-text", slug=study.slug, pk=text.pk)
    original = text.description.text
    try:
        if action == "remove_span":
            spans = anonymization.spans_without(text.spans, int(request.POST.get("index", -1)))
            anonymization.anonymized_text_set_spans(
                text=text, spans=spans, expected_revision=revision, user=request.user
            )
            messages.success(request, "Span removed; text re-rendered.")
        elif action == "add_span":
            spans = anonymization.spans_with_string(
                original,
                text.spans,
                request.POST.get("needle", ""),
                request.POST.get("category", ""),
                whole_words=bool(request.POST.get("whole_words")),
            )
            anonymization.anonymized_text_set_spans(
                text=text, spans=spans, expected_revision=revision, user=request.user
            )
            messages.success(request, "Masked; text re-rendered.")
        elif action == "edit_text":
            anonymization.anonymized_text_set_text(
                text=text,
                new_text=request.POST.get("text", ""),
                expected_revision=revision,
                user=request.user,
            )
            messages.success(request, "Text saved.")
        elif action in ("release", "withdraw", "reopen"):
            status = {
                "release": AnonymizedText.Status.RELEASED,
                "withdraw": AnonymizedText.Status.WITHDRAWN,
                "reopen": AnonymizedText.Status.DRAFT,
            }[action]
            anonymization.anonymized_text_set_status(
                text=text, status=status, user=request.user, expected_revision=revision
            )
            messages.success(request, f"Text is now {status}.")
        else:
            messages.error(request, f"Unknown action {action!r}.")
    except anonymization.StaleRevisionError as exc:
        messages.error(request, f"Not saved: {exc}. Your change was not applied.")
        return redirect("researcher-review-text", slug=study.slug, pk=text.pk)
    except (anonymization.SpanEditError, anonymization.StatusError, ValueError) as exc:
        messages.error(request, f"Not saved: {exc}")
    nxt = request.POST.get("next")
    if action == "release" and nxt and nxt.isdigit():
        return redirect("researcher-review-text", slug=study.slug, pk=int(nxt))
    return redirect("researcher-review-text", slug=study.slug, pk=text.pk)


@login_required
@require_POST
def release_bulk(request: HttpRequest, slug: str) -> HttpResponse:
    """Release all drafts of the study (or one method's), holding back flagged ones."""
    study, _ = _study_for(request, slug, edit=True)
    texts = AnonymizedText.objects.filter(description__study=study)
    method = request.POST.get("method", "")
    if method:
        texts = texts.filter(method=method)
    released, held_back = anonymization.anonymized_texts_release(
        texts=texts, user=request.user, include_flagged=bool(request.POST.get("include_flagged"))
    )
    messages.success(request, f"Released {released} text(s).")
    if held_back:
        messages.warning(
            request,
            f"Held back {len(held_back)} draft(s) whose text still shows the target's name; "
            "review them (filter: drafts flagged for a leak).",
        )
    return redirect("researcher-review", slug=study.slug)


@login_required
@require_GET
def export_table(request: HttpRequest, slug: str, table: str, fmt: str) -> HttpResponse:
    """Download one table of the study as CSV or JSONL."""
    study, _ = _study_for(request, slug)
    if table not in exports.TABLES or fmt not in exports.FORMATS:
        raise Http404("no such export")
    content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
    response = HttpResponse(
        exports.render_table(study, table, fmt), content_type=f"{content_type}; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{study.slug}_{table}.{fmt}"'
    return response

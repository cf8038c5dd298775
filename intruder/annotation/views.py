"""Annotation pages: researchers (login) under /annotate/, crowd annotators (token) under /a/."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from anonymize.annotations.formats import read_documents
from anonymize.annotations.schema import CONFIDENTIAL_STATUSES, DIRECT_BY_DEFAULT, IDENTIFIER_TYPES
from intruder.annotation import adjudication, selectors, services
from intruder.annotation.evaluation import (
    EvaluationError,
    category_rows,
    evaluate_project,
    evaluation_job_latest,
    evaluation_job_start,
    summary_rows,
)
from intruder.annotation.exports import (
    FORMATS,
    IMPORT_ERRORS,
    agreement_export,
    export_bytes,
    import_error_text,
    parse_annotation_file,
)
from intruder.annotation.models import Project, ProjectMember, Task
from intruder.annotation.pages import AGREEMENT_PAGE
from intruder.enrolment import (
    ANNOTATOR_RESUME,
    REFUSAL_PAGES,
    EnrolmentRefused,
    ProlificLink,
    entry_link,
    new_client_admission,
    prolific_completion_url,
)
from intruder.exceptions import errors_as_messages
from intruder.models import Study
from intruder.reports.refresh import page_report
from intruder.selectors.access import owns_study_less_job, studies_visible_to
from intruder.selectors.jobs import no_worker_note
from intruder.web.model_bounds import bounded_formfield

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
# "x" rejects a suggestion, so no category gets it.
SHORTCUT_KEYS = "123456789qwertyuiopasdfghjklzcvbnm"


class ProjectForm(forms.ModelForm):
    custom_categories = forms.CharField(
        required=False, help_text="Custom scheme only: category names separated by commas."
    )

    class Meta:
        model = Project
        formfield_callback = bounded_formfield  # the model's ranges, beside each field
        fields = [
            "title",
            "slug",
            "scheme",
            "annotators_per_text",
            "texts_per_annotator",
            "guidelines",
            "pre_annotate",
            "suggestion_threshold",
            "show_others_work",
            "is_open",
            "prolific_study_id",
            "task_time_limit_minutes",
        ]
        # Words, not field names ("Pre annotate", "Is open").
        labels = {
            "title": "Title",
            "slug": "Short name for links",
            "scheme": "Category scheme",
            "annotators_per_text": "Annotators per text",
            "texts_per_annotator": "Texts per crowd annotator",
            "guidelines": "Guidelines for annotators",
            "pre_annotate": "Suggest the anonymizer's spans",
            "suggestion_threshold": "Suggestion threshold (0 to 1)",
            "show_others_work": "Show annotators the others' submitted work",
            "is_open": "Open for crowd annotators",
            "prolific_study_id": "Prolific study ID",
            "task_time_limit_minutes": "Time limit per text (minutes)",
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["task_time_limit_minutes"].required = False
        self.fields["custom_categories"].label = "Custom categories"

    def clean_task_time_limit_minutes(self) -> int:
        """Empty means the model's default (60 minutes)."""
        value = self.cleaned_data.get("task_time_limit_minutes")
        return value or Project._meta.get_field("task_time_limit_minutes").default


class TextsForm(forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.none(), required=False)
    what = forms.ChoiceField(
        choices=[("descriptions", "descriptions"), ("anonymized", "anonymized texts")],
        required=False,
    )
    file = forms.FileField(required=False, help_text=".txt, .csv (id,text) or .jsonl")


class EvaluateForm(forms.Form):
    system = forms.ChoiceField(
        choices=[("model", "the anonymizer"), ("spacy", "spaCy NER"), ("file", "uploaded file")]
    )
    threshold = forms.FloatField(required=False, min_value=0.0, max_value=1.0)
    file = forms.FileField(required=False)


def _project(request: HttpRequest, slug: str, manager: bool = True) -> tuple[Project, str]:
    project = Project.objects.filter(slug=slug).first()
    role = selectors.project_role(project=project, user=request.user) if project else None
    if role is None or (manager and role != ProjectMember.Role.MANAGER):
        raise Http404("No such project.")
    return project, role


@login_required
@require_GET
def project_list(request: HttpRequest) -> HttpResponse:
    """List the researcher's annotation projects."""
    projects = selectors.projects_for_user(user=request.user)
    return render(request, "annotation/project_list.html", {"projects": projects})


@login_required
def project_create(request: HttpRequest) -> HttpResponse:
    """Create a project (its scheme fixes the categories)."""
    form = ProjectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        custom = data.pop("custom_categories", "").split(",")
        try:
            project = services.project_create(owner=request.user, custom_categories=custom, **data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            return redirect("annotation-project", slug=project.slug)
    return render(request, "annotation/project_form.html", {"form": form})


@login_required
@require_GET
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Show a project's progress, its texts and what can be done with them."""
    project, role = _project(request, slug, manager=False)
    context = {"project": project, "role": role, "is_manager": role == "manager"}
    if role == ProjectMember.Role.MANAGER:
        documents = selectors.documents_with_counts(project=project)
        context |= {
            "progress": selectors.project_progress(project=project),
            "documents": documents[:200],
            "more_documents": max(0, documents.count() - 200),
            "texts_form": _texts_form(request),
            "decisions": selectors.suggestion_decision_counts(project=project),
            "crowd_url": entry_link(
                request.build_absolute_uri(
                    reverse("annotation-crowd-entry", kwargs={"slug": project.slug})
                )
            ),
            "formats": sorted(FORMATS),
            "suggestions_job": services.suggestions_job_latest(project=project),
        }
    return render(request, "annotation/project_detail.html", context)


def _texts_form(request: HttpRequest, data=None, files=None) -> TextsForm:
    form = TextsForm(data, files)
    # Owners, editors and viewers only: a study's "PSI annotator" may not copy its texts.
    form.fields["study"].queryset = studies_visible_to(request.user)
    return form


@login_required
@require_POST
def project_add_texts(request: HttpRequest, slug: str) -> HttpResponse:
    """Add a study's texts or an uploaded file's documents, then compute suggestions."""
    project, _ = _project(request, slug)
    form = _texts_form(request, request.POST, request.FILES)
    try:
        if not form.is_valid():
            raise ValidationError("choose a study or a file")
        upload = form.cleaned_data.get("file")
        if upload is not None:
            if upload.size > MAX_UPLOAD_BYTES:
                raise ValidationError("the file is larger than 20 MB")
            documents = read_documents(upload.name, upload.read())
            if any(d.annotations for d in documents):
                # doccano lines with spans: the spans come along as submitted layers.
                imported = services.annotations_import(project=project, documents=documents)
                counts = {
                    "created": imported["documents_created"],
                    "skipped": len(documents) - imported["documents_created"],
                }
            else:
                counts = services.documents_add(project=project, documents=documents)
        elif form.cleaned_data.get("study") is not None:
            counts = services.documents_add_from_study(
                project=project,
                study=form.cleaned_data["study"],
                what=form.cleaned_data.get("what") or "descriptions",
                user=request.user,
            )
        else:
            raise ValidationError("choose a study or a file")
    except IMPORT_ERRORS as error:
        messages.error(request, f"Nothing imported: {import_error_text(error)}")
    else:
        messages.success(request, f"Texts: {counts['created']} added, {counts['skipped']} known.")
        if project.pre_annotate and project.documents.filter(suggestions=[]).exists():
            job, _ = services.suggestions_job_start(project=project, user=request.user)
            messages.info(
                request,
                f"Suggestions are computed in the background (job {job.pk}); a worker "
                "(manage.py run_worker) runs it and this page shows its progress.",
            )
    return redirect("annotation-project", slug=project.slug)


@login_required
@require_POST
@errors_as_messages("annotation-project")
def project_open(request: HttpRequest, slug: str) -> HttpResponse:
    """Open or close the project to new crowd annotators (managers)."""
    project, _ = _project(request, slug)
    services.project_open_set(project=project, is_open=request.POST.get("is_open") == "1")
    return redirect("annotation-project", slug=project.slug)


@login_required
@require_POST
def project_import(request: HttpRequest, slug: str) -> HttpResponse:
    """Import annotations (TAB JSON, doccano JSONL, mention CSV) as submitted layers."""
    project, _ = _project(request, slug)
    upload = request.FILES.get("file")
    if upload is None or upload.size > MAX_UPLOAD_BYTES:
        messages.error(request, "Choose a file of at most 20 MB.")
        return redirect("annotation-project", slug=project.slug)
    try:
        documents = parse_annotation_file(project=project, name=upload.name, data=upload.read())
        counts = services.annotations_import(project=project, documents=documents)
    except IMPORT_ERRORS as error:
        messages.error(request, f"{upload.name}: {import_error_text(error)}. Nothing imported.")
    else:
        messages.success(request, f"Imported {counts}.")
    return redirect("annotation-project", slug=project.slug)


@login_required
@require_GET
def work_next(request: HttpRequest, slug: str) -> HttpResponse:
    """Send the researcher to their open task or a newly claimed one."""
    project, _ = _project(request, slug, manager=False)
    annotator = services.annotator_for_user(project=project, user=request.user)
    task = services.task_next(annotator=annotator)
    if task is None:
        messages.info(request, "Every text has all its annotators, or you annotated them all.")
        return redirect("annotation-project", slug=project.slug)
    return redirect("annotation-task", slug=project.slug, pk=task.pk)


def _annotate_context(project: Project, task: Task, api_url: str, submit_url: str) -> dict:
    categories = list(project.categories)
    return {
        "project": project,
        "task": task,
        "config": {
            "api": api_url,
            "categories": [
                {"name": name, "key": SHORTCUT_KEYS[i] if i < len(SHORTCUT_KEYS) else ""}
                for i, name in enumerate(categories)
            ],
            "identifierTypes": list(IDENTIFIER_TYPES),
            "confidential": list(CONFIDENTIAL_STATUSES),
            "directByDefault": sorted(c for c in categories if c in DIRECT_BY_DEFAULT),
            "taskId": task.pk,
        },
        "submit_url": submit_url,
    }


def _own_task(request: HttpRequest, slug: str, pk: int) -> Task:
    """Return one of the researcher's own tasks in the project; 404 for anyone else's."""
    project, _ = _project(request, slug, manager=False)
    task = (
        Task.objects.filter(pk=pk, document__project=project, annotator__user=request.user)
        .select_related("document__project")
        .first()
    )
    if task is None:
        raise Http404("No such task.")
    return task


@never_cache
@login_required
@require_GET
def task_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The annotation page for one of the researcher's own tasks."""
    task = _own_task(request, slug, pk)
    project = task.document.project
    context = _annotate_context(
        project,
        task,
        reverse("annotation-api", kwargs={"pk": task.pk}),
        reverse("annotation-submit", kwargs={"slug": slug, "pk": task.pk}),
    )
    return render(request, "annotation/annotate.html", context | {"researcher": True})


@login_required
@require_POST
def task_done(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Submit the researcher's task and go on to the next text."""
    task = _own_task(request, slug, pk)
    services.task_submit(task=task)
    return redirect("annotation-work", slug=slug)


@login_required
@require_GET
def agreement(request: HttpRequest, slug: str) -> HttpResponse:
    """Show inter-annotator agreement for the project and each annotator pair."""
    project, _ = _project(request, slug)
    if request.GET.get("format") in ("json", "csv"):
        fmt = request.GET["format"]
        response = HttpResponse(
            agreement_export(project=project, fmt=fmt),
            content_type="application/json" if fmt == "json" else "text/csv",
        )
        response["Content-Disposition"] = f'attachment; filename="{slug}-agreement.{fmt}"'
        return response
    # Seconds of per-character statistics: stored per state of the annotations, refreshed
    # by a job; an older result is shown labelled meanwhile.
    shown = page_report(project=project, name=AGREEMENT_PAGE, user=request.user)
    if shown.job is not None and not owns_study_less_job(request.user, shown.job):
        shown.job = None  # its progress is its starter's to poll; the label still shows
    context = {"project": project, "result": shown.value, "shown": shown}
    return render(request, "annotation/agreement.html", context)


def _annotator_choice(project: Project, value: str | None) -> Any:
    if not value or not value.isdigit():
        return None
    return project.annotators.exclude(name=adjudication.GOLD_LAYER).filter(pk=int(value)).first()


@login_required
def adjudicate(request: HttpRequest, slug: str) -> HttpResponse:
    """Compare two annotators' layers and merge them into the gold layer (managers only)."""
    project, _ = _project(request, slug)
    data = request.POST if request.method == "POST" else request.GET
    annotators = adjudication.adjudicable_annotators(project=project)
    first = _annotator_choice(project, data.get("a"))
    second = _annotator_choice(project, data.get("b"))
    if first is None and second is None and len(annotators) >= 2:
        first, second = annotators[0], annotators[1]
    context: dict[str, Any] = {
        "project": project,
        "annotators": annotators,
        "first": first,
        "second": second,
        "choices": {},
    }
    if first is not None and second is not None:
        try:
            if request.method == "POST":
                choices = {
                    key.removeprefix("choice-"): value
                    for key, value in request.POST.items()
                    if key.startswith("choice-")
                }
                context["choices"] = choices
                counts = adjudication.adjudication_merge(
                    project=project, first=first, second=second, choices=choices
                )
                messages.success(
                    request,
                    f"Gold layer written: {counts['mentions']} mentions in "
                    f"{counts['documents']} texts, {counts['disagreements']} disagreements "
                    "resolved. It is exported as the layer “gold”.",
                )
                return redirect("annotation-project", slug=project.slug)
        except ValidationError as error:
            context["error"] = " ".join(error.messages)
        try:
            comparison = adjudication.adjudication_compare(
                project=project, first=first, second=second
            )
        except ValidationError as error:
            context["error"] = " ".join(error.messages)
        else:
            context["comparison"] = comparison
            # Each disagreement with the side chosen before (kept when a POST was refused).
            context["rows"] = [
                (d, context["choices"].get(d.key, "")) for d in comparison.disagreements
            ]
    return render(request, "annotation/adjudicate.html", context)


@login_required
def evaluate(request: HttpRequest, slug: str) -> HttpResponse:
    """Evaluate the anonymizer or spaCy (a background job with a progress bar) or an uploaded
    system output (scored in the request) with TAB's metrics."""
    project, _ = _project(request, slug)
    form = EvaluateForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"project": project, "form": form}
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        upload = data.get("file")
        try:
            if data["system"] != "file":
                job, created = evaluation_job_start(
                    project=project,
                    user=request.user,
                    system=data["system"],
                    threshold=data.get("threshold"),
                )
                if not created:
                    messages.info(request, f"Evaluation job {job.pk} is already running.")
                return redirect(reverse("annotation-evaluate", args=[project.slug]))
            evaluation = evaluate_project(
                project=project,
                system=upload.name if upload else "file",
                upload=upload.read() if upload else None,
            )
        except EvaluationError as error:
            form.add_error(None, str(error))
        else:
            context["metrics"] = evaluation.metrics
    elif request.method == "GET":
        job = evaluation_job_latest(project=project)
        if job is not None:
            job.waiting_note = no_worker_note(job)
            context |= {
                "job": job,
                "job_rows": [job],
                "can_edit": owns_study_less_job(request.user, job),
            }
            if job.status == job.Status.SUCCEEDED:
                context["metrics"] = job.result
    if context.get("metrics"):
        context |= {
            "summary": summary_rows(context["metrics"]),
            "categories": category_rows(context["metrics"]),
        }
    return render(request, "annotation/evaluate.html", context)


@login_required
@require_GET
def export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    """Download the submitted annotations as TAB JSON, doccano JSONL or CSV."""
    project, _ = _project(request, slug)
    if fmt not in FORMATS:
        raise Http404("Unknown format.")
    content_type = {"tab": "application/json", "doccano": "application/jsonl", "csv": "text/csv"}
    response = HttpResponse(export_bytes(project=project, fmt=fmt), content_type=content_type[fmt])
    response["Content-Disposition"] = f'attachment; filename="{slug}-{fmt}{FORMATS[fmt]}"'
    return response


# Crowd annotators ---------------------------------------------------------------------------


def _crowd_message(request: HttpRequest, title: str, text: str, status: int = 200, **extra):
    return render(
        request,
        "annotation/crowd_message.html",
        {"title": title, "text": text, **extra},
        status=status,
    )


@never_cache
@require_GET
def crowd_entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Enrol (or resume) a crowd annotator from a Prolific link, with the study side's checks."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise Http404("No such study.")
    link = ProlificLink.from_request(request)
    if not link.pid.strip():
        # Same browser coming back without the query string: resume from its cookie.
        annotator = selectors.annotator_get_by_token(
            token=ANNOTATOR_RESUME.token(request, slug=project.slug)
        )
        if annotator is not None and annotator.project_id == project.pk:
            return redirect("annotation-crowd-home", token=annotator.token)
    try:
        annotator = services.annotator_enroll(
            project=project,
            prolific_pid=link.pid,
            prolific_study_id=link.study_id,
            admit_new=new_client_admission(request),
        )
    except EnrolmentRefused as refusal:
        status, title, text = REFUSAL_PAGES[refusal.code]
        return _crowd_message(request, title, text, status=status)
    response = redirect("annotation-crowd-home", token=annotator.token)
    ANNOTATOR_RESUME.keep(request, response, slug=project.slug, token=annotator.token)
    return response


def _crowd(token: str):
    annotator = selectors.annotator_get_by_token(token=token)
    if annotator is None:
        raise Http404("No such session.")
    return annotator


PAUSED = (
    "Paused",
    "This annotation study is paused for now. Please come back later, or return it on Prolific.",
)
TIMED_OUT = (
    "Time limit reached",
    "A text stayed untouched for longer than the time limit, so it was given to someone "
    "else. Please return the study on Prolific (\u201cReturn submission\u201d).",
)


@never_cache
@require_GET
def crowd_home(request: HttpRequest, token: str) -> HttpResponse:
    """Show the guidelines first, then the current text, then the completion page."""
    annotator = _crowd(token)
    project = annotator.project
    if services.project_paused(project=project):
        # An intruder study over the same persons is open: show no original text.
        return _crowd_message(request, *PAUSED, status=503)
    if annotator.status == annotator.Status.TIMED_OUT:
        return _crowd_message(request, *TIMED_OUT)
    if annotator.instructions_seen_at is None:
        return render(
            request, "annotation/crowd_instructions.html", {"project": project, "token": token}
        )
    task = None
    if annotator.status == annotator.Status.STARTED:
        try:
            task = services.task_next(annotator=annotator)
        except RuntimeError:
            return _crowd_message(request, "Busy", "Please reload in a few seconds.", status=503)
    annotator.refresh_from_db(fields=["status"])
    if annotator.status == annotator.Status.TIMED_OUT:
        return _crowd_message(request, *TIMED_OUT)
    if task is None:
        if not services.annotator_complete(annotator=annotator):
            return _crowd_message(
                request,
                "No texts available",
                "There is nothing left to annotate right now. Please return the study on Prolific.",
            )
        return _crowd_message(
            request,
            "Thank you!",
            "You have annotated every text we had for you.",
            completion_url=prolific_completion_url(project.completion_code),
        )
    done = annotator.tasks.filter(status=Task.Status.SUBMITTED).count()
    context = _annotate_context(
        project,
        task,
        reverse("annotation-crowd-api", kwargs={"token": token, "pk": task.pk}),
        reverse("annotation-crowd-submit", kwargs={"token": token}),
    )
    context |= {"number": done + 1, "total": project.texts_per_annotator, "token": token}
    return render(request, "annotation/annotate.html", context)


@never_cache
@require_POST
def crowd_start(request: HttpRequest, token: str) -> HttpResponse:
    """Record that the guidelines were read."""
    annotator = _crowd(token)
    services.annotator_instructions_confirm(annotator=annotator)
    return redirect("annotation-crowd-home", token=token)


@never_cache
@require_POST
def crowd_submit(request: HttpRequest, token: str) -> HttpResponse:
    """Submit the current text (only the one shown: a stale tab's post changes nothing)."""
    annotator = _crowd(token)
    task_id = request.POST.get("task", "")
    task = annotator.tasks.filter(status=Task.Status.ACTIVE).first()
    if task is not None and str(task.pk) == task_id:
        services.task_submit(task=task)
    return redirect("annotation-crowd-home", token=token)

"""The LLM jobs' researcher actions (login and the editor role required): anonymize a study's
descriptions with an LLM prompt, and run the open-world LLM intruder on its texts. Both are
posted from the study page, which shows their results (`selectors`), and return to it."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from intruder.exceptions import errors_as_messages
from intruder.llm_intruder import services as llm_jobs
from intruder.web.access import study_for


@login_required
@require_POST
@errors_as_messages("researcher-study", prefix="Nothing queued: ")
def study_anonymize_llm(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a background job that anonymizes the descriptions with an LLM prompt."""
    return _llm_job_queue(
        request,
        slug,
        "LLM anonymization",
        llm_jobs.llm_anonymization_start,
        prompt=request.POST.get("prompt", ""),
    )


@login_required
@require_POST
@errors_as_messages("researcher-study", prefix="Nothing queued: ")
def study_llm_intruder(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue the open-world LLM intruder on the study's anonymized texts."""
    return _llm_job_queue(
        request,
        slug,
        "LLM intruder",
        llm_jobs.llm_intruder_start,
        methods=request.POST.getlist("methods"),
    )


def _llm_job_queue(
    request: HttpRequest, slug: str, label: str, start: Any, **params: Any
) -> HttpResponse:
    """Queue an LLM job through its start service for an editor; say so on the study page."""
    study, _ = study_for(request, slug, edit=True)
    job = start(study=study, user=request.user, **params)
    messages.success(request, f"{label} job {job.pk} queued.")
    return redirect("researcher-study", slug=study.slug)

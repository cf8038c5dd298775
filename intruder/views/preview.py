"""The researcher's "try it yourself" preview: the real participant pages, nothing recorded.

Every page is rendered from the participant templates with the study's own texts (or
targets) and a "Preview - nothing is recorded" banner. Answers are checked as participants'
are and follow post/redirect/get, errors included, but nothing is written to the database,
not even the session: what the preview must carry from page to page (which texts were drawn,
a rejected answer to show again) travels in a signed cookie of the researcher's browser.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from intruder.models import Study
from intruder.selectors.participant import Step
from intruder.services.preview import (
    PreviewPlan,
    preview_answer_check,
    preview_plan,
    preview_rejected,
    preview_state_new,
)
from intruder.views.participant.base import Page
from intruder.views.participant.pages import PAGE_SEQUENCE, STATUS_PAGES
from intruder.web.access import study_for

COOKIE_SALT = "intruder.preview"
COOKIE_AGE = 12 * 3600
MAX_COOKIE_BYTES = 3800


def _study(request: HttpRequest, slug: str) -> Study:
    """Return the study if the researcher may read it (404 otherwise, as its other pages)."""
    return study_for(request, slug)[0]


def _cookie_name(study: Study) -> str:
    return f"intruder_preview_{study.pk}"


def _state(request: HttpRequest, study: Study) -> dict:
    """Return the preview's state from its cookie, or a fresh one."""
    try:
        state = signing.loads(
            request.COOKIES.get(_cookie_name(study), ""), salt=COOKIE_SALT, max_age=COOKIE_AGE
        )
    except signing.BadSignature:
        return preview_state_new()
    return state if isinstance(state, dict) and "seed" in state else preview_state_new()


def _with_state(
    request: HttpRequest, response: HttpResponse, study: Study, state: dict
) -> HttpResponse:
    """Store the preview's state in its cookie (a browser keeps at most ~4 KB of it)."""
    value = signing.dumps(state, salt=COOKIE_SALT, compress=True)
    if len(value) > MAX_COOKIE_BYTES:
        # A very long rejected text: keep the errors, drop what was typed.
        rejected = {**state.get("rejected", {}), "values": {}}
        value = signing.dumps({**state, "rejected": rejected}, salt=COOKIE_SALT, compress=True)
    response.set_cookie(
        _cookie_name(study),
        value,
        max_age=COOKIE_AGE,
        path=_url(study),
        secure=request.is_secure(),
        httponly=True,
        samesite="Lax",
    )
    return response


def _url(study: Study, step: str = "", number: int | None = None) -> str:
    if not step:
        return reverse("researcher-preview", args=[study.slug])
    if number is None:
        return reverse("researcher-preview-step", args=[study.slug, step])
    return reverse("researcher-preview-item", args=[study.slug, step, number])


def _render(request: HttpRequest, study: Study, template: str, context: dict) -> HttpResponse:
    context |= {
        "study": study,
        "preview": {
            "study_url": reverse("researcher-study", args=[study.slug]),
            "restart_url": f"{_url(study)}?restart=1",
        },
    }
    return render(request, template, context)


def _page_url(study: Study, page: Page, number: int = 1) -> str:
    """Return the preview URL of a page (of its item `number` when shown once per item)."""
    if page is PAGE_SEQUENCE[study.kind][0]:
        return _url(study)
    return _url(study, page.preview_step, number if page.per_item else None)


def _next_url(study: Study, page: Page, number: int, items: int) -> str:
    """Return where a preview page's accepted form leads: its next item, or the next page."""
    if page.per_item and number < items:
        return _page_url(study, page, number + 1)
    sequence = PAGE_SEQUENCE[study.kind]
    position = sequence.index(page)
    if position + 1 < len(sequence):
        return _page_url(study, sequence[position + 1])
    return _url(study, Step.COMPLETED)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def study_preview(
    request: HttpRequest, slug: str, step: str = Step.CONSENT, number: int = 0
) -> HttpResponse:
    """Show one preview page, or take its form and redirect to the next (stores nothing)."""
    study = _study(request, slug)
    if request.GET.get("restart"):
        return _with_state(request, redirect(_url(study)), study, preview_state_new())
    state = _state(request, study)
    plan = preview_plan(study=study, state=state)
    if plan.missing:
        context = {"study": study, "missing": plan.missing}
        return render(request, "researcher/preview_unavailable.html", context)
    if step == Step.COMPLETED:
        response = _finished(request, study)
    elif step == Step.RETURNED:
        response = _declined(request, study)
    else:
        response = _page(request, study, plan, state, step, number)
    return _with_state(request, response, study, state)


def _page(
    request: HttpRequest, study: Study, plan: PreviewPlan, state: dict, step: str, number: int
) -> HttpResponse:
    """Show a page of the study's sequence with the plan's content, or take its form."""
    page = next((p for p in PAGE_SEQUENCE[study.kind] if p.preview_step == step), None)
    if page is None or (page.per_item and not 1 <= number <= plan.items):
        raise Http404("no such preview page")
    task = f"{step}:{number}"
    if request.method == "POST":
        if page.step == Step.CONSENT and request.POST.get("decision") == "decline":
            return redirect(_url(study, Step.RETURNED))
        if page.per_item:
            values = {name: request.POST.get(name, "") for name in page.fields}
            if preview_answer_check(study=study, state=state, task=task, values=values):
                return redirect(_page_url(study, page, number))
        return redirect(_next_url(study, page, number, plan.items))
    rejected = preview_rejected(state=state, task=task) if page.per_item else None
    context = page.context(study, page.preview_content(study, plan, number, rejected))
    context["form_action"] = _page_url(study, page, number)
    return _render(request, study, page.template, context)


def _finished(request: HttpRequest, study: Study) -> HttpResponse:
    context = {
        "title": "End of the preview",
        "text": "A participant would now be sent to Prolific with the completion code below. "
        "Nothing you did in this preview was recorded.",
        "completion_code": study.completion_code,
    }
    return _render(request, study, "participant/message.html", context)


def _declined(request: HttpRequest, study: Study) -> HttpResponse:
    page = STATUS_PAGES[Step.RETURNED]
    context = {"title": page.title, "text": page.text}
    return _render(request, study, "participant/message.html", context)

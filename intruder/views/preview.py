"""The researcher's "try it yourself" preview: the real participant pages, nothing recorded.

Every page is rendered from the participant templates with the study's own texts (or
targets) and a "Preview - nothing is recorded" banner. Answers are checked as participants'
are and follow post/redirect/get, errors included, but nothing is written to the database,
not even the session: what the preview must carry from page to page (which texts were drawn,
a rejected answer to show again) travels in a signed cookie of the researcher's browser.
"""

from __future__ import annotations

from types import SimpleNamespace

from django.contrib.auth.decorators import login_required
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from intruder.models import Study
from intruder.selectors.participant import Step
from intruder.services.participants import CurrentStep
from intruder.services.preview import (
    PreviewPlan,
    preview_answer_check,
    preview_plan,
    preview_rejected,
    preview_state_new,
)
from intruder.views.access import study_for
from intruder.views.participant import (
    STATUS_PAGES,
    debrief_page_context,
    judge_page_context,
    recorded_signals,
    write_page_context,
)

COOKIE_SALT = "intruder.preview"
COOKIE_AGE = 12 * 3600
MAX_COOKIE_BYTES = 3800
JUDGMENT_FIELDS = ("self_identified", "guessed_name", "revealing_text", "other_knowledge")


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
    return render(request, f"participant/{template}", context)


def _first_item(study: Study) -> str:
    if study.kind == Study.Kind.INTRUDER:
        return _url(study, "instructions")
    return _url(study, "write", 1)


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
    handler = {
        Step.CONSENT: _consent,
        Step.INSTRUCTIONS: _instructions,
        Step.WRITE: _item,
        "text": _item,
        Step.DEBRIEF: _debrief,
        Step.COMPLETED: _finished,
        Step.RETURNED: _declined,
    }.get(step)
    if handler is None or (study.kind == Study.Kind.COLLECTION and step == Step.INSTRUCTIONS):
        raise Http404("no such preview page")
    response = handler(request, study, plan, state, step, number)
    return _with_state(request, response, study, state)


def _consent(request, study, plan, state, step, number) -> HttpResponse:
    if request.method == "POST":
        if request.POST.get("decision") == "decline":
            return redirect(_url(study, Step.RETURNED))
        return redirect(_first_item(study))
    return _render(
        request,
        study,
        "consent.html",
        {"form_action": _url(study), "recorded_signals": recorded_signals(study)},
    )


def _instructions(request, study, plan, state, step, number) -> HttpResponse:
    if request.method == "POST":
        return redirect(_url(study, "text", 1))
    context = {"form_action": _url(study, Step.INSTRUCTIONS)}
    return _render(request, study, "instructions.html", context)


def _item(request, study: Study, plan: PreviewPlan, state: dict, step, number) -> HttpResponse:
    kind_step = "text" if study.kind == Study.Kind.INTRUDER else Step.WRITE
    if step != kind_step or not 1 <= number <= plan.items:
        raise Http404("no such preview page")
    task = f"{step}:{number}"
    if request.method == "POST":
        fields = ("text",) if step == Step.WRITE else JUDGMENT_FIELDS
        values = {name: request.POST.get(name, "") for name in fields}
        if preview_answer_check(study=study, state=state, task=task, values=values):
            return redirect(_url(study, step, number))
        if number < plan.items:
            return redirect(_url(study, step, number + 1))
        return redirect(_url(study, Step.DEBRIEF))
    rejected = preview_rejected(state=state, task=task)
    if step == Step.WRITE:
        context = write_page_context(
            study=study,
            target=plan.targets[number - 1],
            position=number,
            number=number,
            total=plan.items,
            rejected=rejected,
        )
        template = "write.html"
    else:
        context = judge_page_context(
            study=study,
            assignment=SimpleNamespace(pk=number, text=plan.texts[number - 1]),
            number=number,
            rejected=rejected,
            seconds_left=study.time_limit_minutes * 60,
        )
        template = "judge.html"
    context["form_action"] = _url(study, step, number)
    return _render(request, study, template, context)


def _debrief(request, study: Study, plan: PreviewPlan, state, step, number) -> HttpResponse:
    if request.method == "POST":
        return redirect(_url(study, Step.COMPLETED))
    completed = plan.items if study.kind == Study.Kind.INTRUDER else 0
    current = CurrentStep(step=Step.DEBRIEF, completed=completed)
    context = debrief_page_context(study=study, current=current)
    context["form_action"] = _url(study, Step.DEBRIEF)
    return _render(request, study, "debrief.html", context)


def _finished(request, study: Study, plan, state, step, number) -> HttpResponse:
    context = {
        "title": "End of the preview",
        "text": "A participant would now be sent to Prolific with the completion code below. "
        "Nothing you did in this preview was recorded.",
        "completion_code": study.completion_code,
    }
    return _render(request, study, "message.html", context)


def _declined(request, study: Study, plan, state, step, number) -> HttpResponse:
    title, text = STATUS_PAGES[Step.RETURNED]
    return _render(request, study, "message.html", {"title": title, "text": text})

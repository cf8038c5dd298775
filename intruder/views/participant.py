"""Participant pages (writers and intruders), server-rendered.

Entry: /s/<study slug>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=.. enrols (or finds) the
participant and redirects to /p/<token>/, the one page that always shows their current step.
Every form posts to its own URL and redirects back (post/redirect/get), so reloading any page
never resubmits, and the services make a repeated post a no-op.
"""

from __future__ import annotations

import re

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from intruder.models import Participant, PersonGroup, Study
from intruder.selectors.participant import (
    Step,
    intruder_text_view,
    participant_get_by_token,
    study_get_by_slug,
    writing_task_counts,
)
from intruder.services.assignment import AssignmentBusy
from intruder.services.judgments import JudgmentRejected, judgment_submit
from intruder.services.participants import (
    CurrentStep,
    EnrolmentRefused,
    participant_complete,
    participant_consent_decline,
    participant_consent_give,
    participant_current_step,
    participant_enroll,
    participant_instructions_confirm,
    prolific_completion_url,
)
from intruder.services.writing import description_submit
from intruder.throttles import EnrolmentThrottle

# Remembers a participant's token in their browser, so that opening the study's entry URL
# again without the Prolific query string resumes them.
RESUME_COOKIE = "intruder_resume_{slug}"
RESUME_COOKIE_SALT = "intruder.participant.resume"

REFUSAL_PAGES = {
    EnrolmentRefused.MISSING_PID: (
        400,
        "Missing Prolific ID",
        "This link is missing your Prolific ID (PROLIFIC_PID). Please open the study from "
        "Prolific again, or copy the full link from the Prolific study page.",
    ),
    EnrolmentRefused.INVALID_PID: (
        400,
        "Invalid Prolific ID",
        "The Prolific ID in this link is not valid. Please open the study from Prolific again.",
    ),
    EnrolmentRefused.CLOSED: (
        403,
        "This study is closed",
        "This study is not accepting new participants. Please return the study on Prolific.",
    ),
    EnrolmentRefused.NOT_READY: (
        503,
        "This study is not ready yet",
        "This study has nothing to show yet. Please return the study on Prolific.",
    ),
    EnrolmentRefused.FULL: (
        403,
        "This study is full",
        "Every text in this study has all the judgments it needs, or is being judged by "
        "someone else right now. Please return the study on Prolific.",
    ),
    EnrolmentRefused.WRONG_STUDY: (
        403,
        "This link is not for this study",
        "The study ID in this link does not belong to this study. Please open the study "
        "from Prolific again.",
    ),
    EnrolmentRefused.LINKED: (
        403,
        "You cannot take part in this study",
        "You have taken part in a related study, so your answers here would not be "
        "independent. Please return the study on Prolific. Thank you for your interest.",
    ),
    EnrolmentRefused.THROTTLED: (
        429,
        "Too many sign-ups",
        "Too many new participants have started from your network recently. Please try "
        "again later.",
    ),
}

STATUS_PAGES = {
    Step.RETURNED: (
        "You have left this study",
        "You did not give consent, so you cannot take part. Please return the study on "
        "Prolific (\u201cReturn submission\u201d). No completion code is given.",
    ),
    Step.TIMED_OUT: (
        "Time limit reached",
        "The time limit for this study has passed (or your first text stayed unanswered "
        "while others were waiting), so your place was given to someone else. Please return "
        "the study on Prolific.",
    ),
    Step.NOTHING_LEFT: (
        "No texts available",
        "There is nothing left for you to do in this study right now. "
        "Please return the study on Prolific.",
    ),
    Step.FULL: (
        "This study is full",
        "Every text in this study is taken right now. Please reload this page in a few "
        "minutes, or return the study on Prolific.",
    ),
}


class DescriptionForm(forms.Form):
    """Parse a writer's post; the service checks the minimum length."""

    position = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    text = forms.CharField(required=False, strip=False, widget=forms.Textarea)


class JudgmentForm(forms.Form):
    """Parse an intruder's post; the service checks which answers the choice requires."""

    assignment_id = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    self_identified = forms.TypedChoiceField(
        choices=[("yes", "Yes"), ("no", "No")],
        coerce=lambda value: value == "yes",
        widget=forms.RadioSelect,
        error_messages={"required": "Please say whether you could identify the person."},
    )
    guessed_name = forms.CharField(required=False, max_length=200)
    revealing_text = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    other_knowledge = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    client_ms = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)


def _participant_or_404(token: str) -> Participant:
    participant = participant_get_by_token(token=token)
    if participant is None:
        raise Http404("No such participant session.")
    return participant


def _home(participant: Participant) -> HttpResponseRedirect:
    return redirect("participant-home", token=participant.token)


def _message(
    request: HttpRequest,
    *,
    title: str,
    text: str,
    status: int = 200,
    study: Study | None = None,
    completion_url: str = "",
) -> HttpResponse:
    context = {"title": title, "text": text, "study": study, "completion_url": completion_url}
    return render(request, "participant/message.html", context, status=status)


@never_cache
@require_GET
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Enrol or resume the Prolific participant named in the query string."""
    study = study_get_by_slug(slug=slug)
    if study is None:
        raise Http404("No such study.")
    pid = request.GET.get("PROLIFIC_PID", "")
    if not pid.strip():
        # Same browser coming back without the query string: resume from its cookie.
        token = request.get_signed_cookie(
            RESUME_COOKIE.format(slug=study.slug), default="", salt=RESUME_COOKIE_SALT
        )
        participant = participant_get_by_token(token=token)
        if participant is not None and participant.study_id == study.pk:
            return _home(participant)
    try:
        enrolment = participant_enroll(
            study=study,
            prolific_pid=pid,
            prolific_study_id=request.GET.get("STUDY_ID", ""),
            prolific_session_id=request.GET.get("SESSION_ID", ""),
            admit_new=lambda: EnrolmentThrottle().allow_request(request, None),
        )
    except EnrolmentRefused as refusal:
        status, title, text = REFUSAL_PAGES[refusal.code]
        return _message(request, title=title, text=text, status=status, study=study)
    response = _home(enrolment.participant)
    # A signed cookie rather than the session: participants are not users, and this saves
    # the session table a write per enrolment. It is sent back to this study's entry URL only.
    response.set_signed_cookie(
        RESUME_COOKIE.format(slug=study.slug),
        enrolment.participant.token,
        salt=RESUME_COOKIE_SALT,
        max_age=settings.SESSION_COOKIE_AGE,
        path=request.path,
        secure=settings.SESSION_COOKIE_SECURE or request.is_secure(),
        httponly=True,
        samesite="Lax",
    )
    return response


@never_cache
@require_GET
def home(request: HttpRequest, token: str) -> HttpResponse:
    """Show the participant's current step (consent, instructions, item, debrief, ...)."""
    participant = _participant_or_404(token)
    try:
        current = participant_current_step(participant=participant)
    except AssignmentBusy:
        return _message(
            request,
            title="Busy",
            text="Many people are starting at once. Please reload this page in a few seconds.",
            status=503,
            study=participant.study,
        )
    return _render_step(request, participant, current)


def _render_step(
    request: HttpRequest,
    participant: Participant,
    current: CurrentStep,
    *,
    form: forms.Form | None = None,
    errors: dict[str, list[str]] | None = None,
    status: int = 200,
) -> HttpResponse:
    study = participant.study
    context: dict = {"participant": participant, "study": study, "token": participant.token}
    step = current.step
    if step == Step.CONSENT:
        return render(request, "participant/consent.html", context, status=status)
    if step == Step.INSTRUCTIONS:
        return render(request, "participant/instructions.html", context, status=status)
    if step == Step.WRITE:
        done, total = writing_task_counts(participant=participant)
        task = current.task
        context |= {
            "task": task,
            "target": task.target,
            "is_famous": task.target.group == PersonGroup.FAMOUS,
            "is_semifamous": task.target.group == PersonGroup.SEMIFAMOUS,
            "is_fictitious": task.target.group == PersonGroup.FICTITIOUS,
            "profile": task.target.profile or {},
            "number": done + 1,
            "total": total,
            "progress_pct": int(100 * done / total) if total else 0,
            "form": form,
            "text_value": form.data.get("text", "") if form is not None else "",
            "errors": errors or {},
            "min_chars": study.min_description_chars,
        }
        return render(request, "participant/write.html", context, status=status)
    if step == Step.JUDGE:
        assignment = current.assignment
        done = current.completed
        total = study.items_per_participant
        context |= {
            "assignment": assignment,
            "segments": _text_segments(intruder_text_view(text=assignment.text)),
            "number": done + 1,
            "total": total,
            "progress_pct": int(100 * done / total) if total else 0,
            "values": form.data if form is not None else {},
            "errors": errors or {},
        }
        return render(request, "participant/judge.html", context, status=status)
    if step == Step.DEBRIEF:
        return render(request, "participant/debrief.html", context, status=status)
    if step == Step.COMPLETED:
        return _message(
            request,
            title="You have already completed this study",
            text="Thank you. You cannot take part again. If Prolific has not recorded your "
            "submission yet, use the button below.",
            study=study,
            completion_url=prolific_completion_url(study=study),
        )
    title, text = STATUS_PAGES[step]
    return _message(request, title=title, text=text, study=study)


def _text_segments(view) -> list[tuple[bool, str]]:
    """Split an anonymized text into (is_placeholder, chunk) pieces for highlighting."""
    if not view.placeholders:
        return [(False, view.text)]
    pattern = re.compile("|".join(re.escape(p) for p in view.placeholders))
    segments, last = [], 0
    for match in pattern.finditer(view.text):
        if match.start() > last:
            segments.append((False, view.text[last : match.start()]))
        segments.append((True, match.group(0)))
        last = match.end()
    if last < len(view.text):
        segments.append((False, view.text[last:]))
    return segments


@never_cache
@require_POST
def consent(request: HttpRequest, token: str) -> HttpResponse:
    """Record the consent decision: agree goes on, decline ends with 'please return'."""
    participant = _participant_or_404(token)
    if request.POST.get("decision") == "agree":
        participant_consent_give(participant=participant)
    elif request.POST.get("decision") == "decline":
        participant_consent_decline(participant=participant)
    return _home(participant)


@never_cache
@require_POST
def instructions(request: HttpRequest, token: str) -> HttpResponse:
    """Record that the intruder has read the instructions."""
    participant = _participant_or_404(token)
    participant_instructions_confirm(participant=participant)
    return _home(participant)


@never_cache
@require_POST
def write(request: HttpRequest, token: str) -> HttpResponse:
    """Store one description; too short re-shows the page with the text kept."""
    participant = _participant_or_404(token)
    form = DescriptionForm(request.POST)
    current = participant_current_step(participant=participant)
    if current.step == Step.WRITE and "\x00" in request.POST.get("text", ""):
        # NUL cannot be stored (PostgreSQL) and is never typed on purpose (a paste from a
        # binary file): say so and show the text without it, rather than drop it silently.
        cleaned = form.data.copy()
        cleaned["text"] = cleaned["text"].replace("\x00", "")
        return _render_step(
            request,
            participant,
            current,
            form=DescriptionForm(cleaned),
            errors={
                "text": [
                    "Your text contained an invalid (NUL) character. We removed it: please "
                    "check your text and submit again."
                ]
            },
            status=400,
        )
    if not form.is_valid() or current.step != Step.WRITE:
        return _home(participant)
    position = form.cleaned_data["position"]
    if position != current.task.position:
        # A stale tab posting a task already written (no-op) or one not reached yet.
        return _home(participant)
    try:
        description_submit(
            participant=participant, position=position, text=form.cleaned_data["text"]
        )
    except ValidationError as error:
        return _render_step(
            request, participant, current, form=form, errors=error.message_dict, status=400
        )
    return _home(participant)


@never_cache
@require_POST
def judge(request: HttpRequest, token: str) -> HttpResponse:
    """Store one judgment; missing answers re-show the same text with the answers kept."""
    participant = _participant_or_404(token)
    form = JudgmentForm(request.POST)
    if "assignment_id" not in request.POST or participant.status != Participant.Status.STARTED:
        return _home(participant)
    if not form.is_valid():
        return _judgment_reshown(
            request, participant, form, form.errors, request.POST.get("assignment_id", "")
        )
    data = form.cleaned_data
    try:
        judgment_submit(
            participant=participant,
            assignment_id=data["assignment_id"],
            self_identified=data["self_identified"],
            guessed_name=data["guessed_name"],
            revealing_text=data["revealing_text"],
            other_knowledge=data["other_knowledge"],
            client_time_ms=data["client_ms"],
        )
    except JudgmentRejected:
        return _home(participant)
    except ValidationError as error:
        return _judgment_reshown(
            request, participant, form, error.message_dict, str(data["assignment_id"])
        )
    return _home(participant)


def _judgment_reshown(
    request: HttpRequest,
    participant: Participant,
    form: forms.Form,
    errors: dict[str, list[str]],
    assignment_id: str,
) -> HttpResponse:
    """Re-show the text with the answers kept and the errors, if it is still the current one.

    A post for another text (a stale tab) just goes back to the participant's current page.
    """
    current = participant_current_step(participant=participant)
    if current.step != Step.JUDGE or str(current.assignment.pk) != assignment_id:
        return _home(participant)
    return _render_step(request, participant, current, form=form, errors=errors, status=400)


@never_cache
@require_POST
def finish(request: HttpRequest, token: str) -> HttpResponse:
    """Complete the study and send the participant to Prolific with the completion code."""
    participant = _participant_or_404(token)
    if not participant_complete(participant=participant):
        return _home(participant)
    return HttpResponseRedirect(prolific_completion_url(study=participant.study))

"""Participant pages (writers and intruders), server-rendered.

Entry: /s/<study slug>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=.. enrols (or finds) the
participant and redirects to /p/<token>/, the one page that always shows their current step.
Every form posts to its own URL and redirects back (post/redirect/get), errors included: a
rejected answer is kept on the participant (`services.form_state`) and shown after the
redirect, so reloading any page or going back never resubmits, and the services make a
repeated post a no-op. The pages are a table (`PAGES`, `PAGE_SEQUENCE`): each step's template,
context builder and form; the participant URLs and the researchers' preview (`views.preview`)
are made from it, so a new step is one row.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from intruder.enrolment import (
    PARTICIPANT_RESUME,
    REFUSAL_PAGES,
    EnrolmentRefused,
    ProlificLink,
    new_client_admission,
    prolific_completion_url,
)
from intruder.models import (
    Assignment,
    AttentionCheck,
    Participant,
    PersonGroup,
    Study,
    TargetPerson,
)
from intruder.prolific.client import prolific_enabled
from intruder.prolific.webhooks import submission_known
from intruder.selectors.participant import (
    SHORT_FULL,
    Step,
    assignment_completed_count,
    intruder_short_run_reason,
    intruder_text_view,
    participant_get_by_token,
    study_get_by_slug,
    writing_task_counts,
)
from intruder.services.assignment import AssignmentBusy
from intruder.services.attention import MAX_ANSWER_CHARS, attention_check_submit
from intruder.services.canary import canary_encoded
from intruder.services.familiarity import (
    FamiliarityRefused,
    familiarity_due,
    familiarity_persons,
    familiarity_record,
)
from intruder.services.form_state import (
    RejectedAnswer,
    check_task_key,
    form_state_clear,
    form_state_for,
    form_state_keep,
    judge_task_key,
    write_task_key,
)
from intruder.services.judgments import CHOICE_REQUIRED, JudgmentRejected, judgment_submit
from intruder.services.page_views import page_view_report, page_view_serve
from intruder.services.participants import (
    CurrentStep,
    participant_code_reached,
    participant_complete,
    participant_consent_decline,
    participant_consent_give,
    participant_current_step,
    participant_enroll,
    participant_instructions_confirm,
    writer_consent_closed,
)
from intruder.services.writing import description_submit

if TYPE_CHECKING:
    from intruder.services.preview import PreviewPlan

STATUS_PAGES = {
    Step.RETURNED: (
        "You have left this study",
        "You did not give consent, or you returned the study on Prolific, so you cannot "
        "take part. If you have not yet, please return the study on Prolific (\u201cReturn "
        "submission\u201d). No completion code is given.",
    ),
    Step.TIMED_OUT: (
        "Time limit reached",
        "The time limit for this study has passed before you had finished a text (or your "
        "first text stayed unanswered while others were waiting), so your place was given to "
        "someone else. Please return the study on Prolific (\u201cReturn submission\u201d).",
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


# The answers an intruder's text page posts (kept, when rejected, to show again).
JUDGMENT_FIELDS = ("self_identified", "guessed_name", "revealing_text", "other_knowledge")


class JudgmentForm(forms.Form):
    """Parse an intruder's post; the service checks which answers the choice requires."""

    assignment_id = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    self_identified = forms.TypedChoiceField(
        choices=[("yes", "Yes"), ("no", "No")],
        coerce=lambda value: value == "yes",
        widget=forms.RadioSelect,
        error_messages={"required": CHOICE_REQUIRED},
    )
    guessed_name = forms.CharField(required=False, max_length=200)
    revealing_text = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    other_knowledge = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    client_ms = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)
    # The posted `telemetry` is read raw, not by the form: whatever it holds, it must never
    # reject the answer (services.telemetry turns a bad one into "no telemetry").


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
    extra: dict | None = None,
) -> HttpResponse:
    context = {
        **(extra or {}),
        "title": title,
        "text": text,
        "study": study,
        "completion_url": completion_url,
        "completion_code": study.completion_code if study and completion_url else "",
    }
    return render(request, "participant/message.html", context, status=status)


def _prolific_check(study, pid: str, session_id: str):
    """Return the "Prolific knows this place" check, or None without a token or study ID."""
    if not (prolific_enabled() and study.prolific_study_id):
        return None
    return lambda: submission_known(
        study=study, prolific_pid=pid.strip(), session_id=session_id.strip()
    )


def _refusal(request: HttpRequest, refusal: EnrolmentRefused, study: Study) -> HttpResponse:
    status, title, text = REFUSAL_PAGES[refusal.code]
    return _message(request, title=title, text=text, status=status, study=study)


@never_cache
@require_GET
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Enrol or resume the Prolific participant named in the query string."""
    study = study_get_by_slug(slug=slug)
    if study is None:
        raise Http404("No such study.")
    link = ProlificLink.from_request(request)
    if not link.pid.strip():
        # Same browser coming back without the query string: resume from its cookie.
        participant = participant_get_by_token(
            token=PARTICIPANT_RESUME.token(request, slug=study.slug)
        )
        if participant is not None and participant.study_id == study.pk:
            return _home(participant)
    try:
        enrolment = participant_enroll(
            study=study,
            prolific_pid=link.pid,
            prolific_study_id=link.study_id,
            prolific_session_id=link.session_id,
            admit_new=new_client_admission(request),
            admit_known=_prolific_check(study, link.pid, link.session_id),
        )
    except EnrolmentRefused as refusal:
        return _refusal(request, refusal, study)
    response = _home(enrolment.participant)
    PARTICIPANT_RESUME.keep(request, response, slug=study.slug, token=enrolment.participant.token)
    return response


@never_cache
@require_GET
def home(request: HttpRequest, token: str) -> HttpResponse:
    """Show the participant's current step (consent, instructions, item, debrief, ...)."""
    participant = _participant_or_404(token)
    if writer_consent_closed(participant=participant):
        return _refusal(request, EnrolmentRefused(EnrolmentRefused.CLOSED), participant.study)
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
    if current.step == Step.DEBRIEF:
        # The debrief shows the completion code: whoever sees it has completed, as Prolific
        # counts it, even if they close the tab instead of pressing "Finish".
        participant_code_reached(participant=participant)
    return _render_step(request, participant, current)


def _render_step(
    request: HttpRequest, participant: Participant, current: CurrentStep
) -> HttpResponse:
    study = participant.study
    token = participant.token
    step = current.step
    context: dict = {"participant": participant, "study": study}
    page = PAGES.get(step)
    if page is not None:
        content = page.content(participant, current)
        context |= page.context(study, content)
        context["form_action"] = reverse(page.url_name, args=[token])
        if step == Step.WRITE:
            # The browser keeps the unsent draft under this key (cleared once it is stored).
            context["draft_key"] = f"intruder-draft:{token}:{content.position}"
    if step in (Step.WRITE, Step.DEBRIEF) or page is None:
        context["draft_prefix"] = f"intruder-draft:{token}:"  # stored drafts: forget them
    if page is not None:
        return render(request, page.template, context)
    if step == Step.COMPLETED:
        return _message(
            request,
            title="You have already completed this study",
            text="Thank you. You cannot take part again. If Prolific has not recorded your "
            "submission yet, enter the completion code below on Prolific, or use the button.",
            study=study,
            completion_url=prolific_completion_url(study.completion_code),
            extra=context,
        )
    if step == Step.TIMED_OUT:
        judged = assignment_completed_count(participant=participant)
        if judged:
            # Work done before the limit is paid for, as Prolific expects (docs/participants.md).
            return _message(
                request,
                title="Time limit reached",
                text=f"The time for your text ran out and it was given to someone else, so "
                f"the study ends here for you. Your answers to the {judged} "
                f"text{'s' if judged != 1 else ''} you finished are saved, and they count: "
                "please submit the completion code below on Prolific.",
                study=study,
                completion_url=prolific_completion_url(study.completion_code),
                extra=context,
            )
    title, text = STATUS_PAGES[step]
    return _message(request, title=title, text=text, study=study, extra=context)


# What each telemetry signal records, in the consent page's words (services.telemetry).
SIGNAL_WORDS = {
    "timing": "how long you spend on each page, and when and how long you type",
    "keystrokes": "how many keys you press (not which ones)",
    "paste": "whether you paste into an answer, and how many characters",
    "copy": "whether you copy the text shown, and how many characters",
    "focus": "how often and how long you leave the page (another tab or window)",
}


def recorded_signals(study: Study) -> list[str]:
    """Return the consent page's lines on what the study's telemetry records."""
    return [SIGNAL_WORDS[name] for name in SIGNAL_WORDS if name in (study.telemetry_signals or [])]


def _seconds_left(assignment: Assignment, study: Study) -> int:
    """Return the seconds until the text's time limit (the rule of `assignment_expired`)."""
    deadline = assignment.assigned_at + timedelta(minutes=study.time_limit_minutes)
    # Rounded up: the page never says "time is up" before the server would release the text.
    return max(0, math.ceil((deadline - timezone.now()).total_seconds()))


def time_warning_seconds(study: Study) -> int:
    """Return how long before the time limit the page warns: a fifth of it, 1 to 5 minutes."""
    return int(min(300, max(60, study.time_limit_minutes * 60 // 5)))


@dataclass(frozen=True)
class PageContent:
    """What one page shows: filled from a participant's stored state, or from the preview's plan.

    Item pages are numbered from 1 of `total`; `assignment` needs `pk` and `text` (the
    preview passes a stand-in that is no database row).
    """

    number: int = 0
    total: int = 0
    target: TargetPerson | None = None
    position: int = 0
    assignment: Assignment | Any = None
    check: AttentionCheck | None = None
    completed: int = 0
    rejected: RejectedAnswer | None = None
    seconds_left: int = 0
    view_token: str = ""
    short_reason: str = ""
    reachable: int = 0
    familiarity: tuple[TargetPerson, ...] = ()


def consent_page_context(study: Study, content: PageContent) -> dict:
    """Return the consent page's context: what the study's telemetry records."""
    return {"recorded_signals": recorded_signals(study)}


def instructions_page_context(study: Study, content: PageContent) -> dict:
    """Return the instructions page's context (the template holds them all)."""
    return {}


def write_page_context(study: Study, content: PageContent) -> dict:
    """Return the context of a writer's description page."""
    target, number, total, rejected = (
        content.target,
        content.number,
        content.total,
        content.rejected,
    )
    return {
        "position": content.position,
        "target": target,
        "is_famous": target.group == PersonGroup.FAMOUS,
        "is_semifamous": target.group == PersonGroup.SEMIFAMOUS,
        "is_fictitious": target.group == PersonGroup.FICTITIOUS,
        "profile": target.profile or {},
        "number": number,
        "total": total,
        "progress_done": number - 1,
        "progress_pct": int(100 * (number - 1) / total) if total else 0,
        "text_value": rejected.values.get("text", "") if rejected else "",
        "errors": rejected.errors if rejected else {},
        "min_chars": study.min_description_chars,
        "telemetry_signals": " ".join(study.telemetry_signals or []),
    }


def judge_page_context(study: Study, content: PageContent) -> dict:
    """Return the context of an intruder's text page."""
    assignment, number, rejected = content.assignment, content.number, content.rejected
    total = study.items_per_participant
    canary = getattr(assignment, "canary", "")
    return {
        "assignment_id": assignment.pk,
        "segments": _text_segments(intruder_text_view(text=assignment.text)),
        # Decoded into the text by the page's script, hidden from sight and from the
        # accessibility tree; see services.canary.
        "canary_encoded": canary_encoded(canary) if canary else "",
        # The served page view the telemetry must name (services.page_views); none in a
        # researcher's preview.
        "view_token": content.view_token,
        "telemetry_signals": " ".join(study.telemetry_signals or []),
        "discourage_copy": study.discourage_copy,
        "number": number,
        "total": total,
        "progress_done": number - 1,
        "progress_pct": int(100 * (number - 1) / total) if total else 0,
        "values": rejected.values if rejected else {},
        "errors": rejected.errors if rejected else {},
        "seconds_left": content.seconds_left,
        "time_limit_minutes": study.time_limit_minutes,
        "warn_seconds": time_warning_seconds(study),
    }


def attention_check_page_context(study: Study, content: PageContent) -> dict:
    """Return the context of an attention check's page: its instruction, never its answer."""
    check, rejected = content.check, content.rejected
    return {
        "check_id": check.pk,
        "prompt": check.prompt,
        "values": rejected.values if rejected else {},
        "errors": rejected.errors if rejected else {},
    }


@dataclass(frozen=True)
class ShortRun:
    """An intruder who finished with fewer texts than announced, and why (a
    `selectors.participant.SHORT_*` reason; `reachable`: the most one intruder can get)."""

    judged: int
    announced: int
    reason: str
    reachable: int


def debrief_page_context(study: Study, content: PageContent) -> dict:
    """Return the debrief's context: the code as text, and why a run ended early if it did."""
    short = None
    if study.kind == Study.Kind.INTRUDER and content.completed < study.items_per_participant:
        short = ShortRun(
            judged=content.completed,
            announced=study.items_per_participant,
            reason=content.short_reason or SHORT_FULL,
            reachable=content.reachable,
        )
    return {
        "completion_code": study.completion_code,
        "short": short,
        "familiarity": content.familiarity,
    }


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
        try:
            participant_consent_give(participant=participant)
        except EnrolmentRefused as refusal:
            return _refusal(request, refusal, participant.study)
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
    """Store one description; a rejected one is kept with its error and shown after redirect."""
    participant = _participant_or_404(token)
    form = DescriptionForm(request.POST)
    form.is_valid()
    position = form.cleaned_data.get("position")
    current = participant_current_step(participant=participant)
    if current.step != Step.WRITE or position != current.task.position:
        # A stale tab posting a task already written (no-op) or one not reached yet.
        return _home(participant)
    try:
        if form.errors:  # e.g. characters no text may hold
            raise ValidationError({k: list(v) for k, v in form.errors.items()})
        description_submit(
            participant=participant,
            position=position,
            text=form.cleaned_data["text"],
            telemetry=request.POST.get("telemetry", ""),
        )
    except ValidationError as error:
        form_state_keep(
            participant=participant,
            task=write_task_key(position),
            values={"text": request.POST.get("text", "")},
            errors=error.message_dict,
        )
    else:
        form_state_clear(participant=participant)
    return _home(participant)


# Late answers come from participants the sweep has just timed out (services.judgments).
JUDGING_STATUSES = (Participant.Status.STARTED, Participant.Status.TIMED_OUT)


@never_cache
@require_POST
def judge(request: HttpRequest, token: str) -> HttpResponse:
    """Store one judgment; a rejected one is kept with its errors and shown after redirect."""
    participant = _participant_or_404(token)
    form = JudgmentForm(request.POST)
    if "assignment_id" not in request.POST or participant.status not in JUDGING_STATUSES:
        return _home(participant)
    if not form.is_valid():
        _keep_rejected_judgment(participant, request.POST, form.errors)
        if form.cleaned_data.get("assignment_id"):
            _keep_rejected_telemetry(participant, request.POST, form.cleaned_data["assignment_id"])
        return _home(participant)
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
            telemetry=request.POST.get("telemetry", ""),
        )
    except JudgmentRejected:
        pass
    except ValidationError as error:
        _keep_rejected_judgment(participant, request.POST, error.message_dict)
        _keep_rejected_telemetry(participant, request.POST, data["assignment_id"])
    else:
        form_state_clear(participant=participant)
    return _home(participant)


def _keep_rejected_telemetry(participant: Participant, posted: dict, assignment_id: int) -> None:
    """Count a rejected answer's typing for its page view: the next view shows it prefilled."""
    page_view_report(
        participant=participant, raw=posted.get("telemetry", ""), assignment_id=assignment_id
    )


@never_cache
@require_POST
def telemetry(request: HttpRequest, token: str) -> HttpResponse:
    """Take a page view's telemetry as the participant leaves the page (a beacon): 204.

    Whatever is posted, the answer is the same empty 204, so the endpoint tells a forger
    nothing; only a report naming one of this participant's open page views is kept.
    """
    participant = _participant_or_404(token)
    page_view_report(participant=participant, raw=request.POST.get("telemetry", ""))
    return HttpResponse(status=204)


def _keep_rejected_judgment(
    participant: Participant, posted: dict, errors: dict[str, list[str]]
) -> None:
    """Keep the typed answers for the text they were typed for (shown only on its page)."""
    form_state_keep(
        participant=participant,
        task=judge_task_key(posted.get("assignment_id", "")),
        values={name: posted.get(name, "") for name in JUDGMENT_FIELDS},
        errors={name: list(messages) for name, messages in errors.items()},
    )


@never_cache
@require_POST
def attention_check(request: HttpRequest, token: str) -> HttpResponse:
    """Score an attention check's answer; an empty one is kept and asked again after redirect.

    The page never says whether the answer was right (a failed check only flags answers).
    """
    participant = _participant_or_404(token)
    check_id = request.POST.get("check_id", "")
    if participant.status != Participant.Status.STARTED or not check_id.isdigit():
        return _home(participant)
    answer = request.POST.get("answer", "")
    try:
        attention_check_submit(participant=participant, check_id=int(check_id), answer=answer)
    except ValueError as error:
        form_state_keep(
            participant=participant,
            task=check_task_key(check_id),
            values={"answer": answer[:MAX_ANSWER_CHARS]},
            errors={"answer": [str(error)]},
        )
    else:
        form_state_clear(participant=participant)
    return _home(participant)


@never_cache
@require_POST
def finish(request: HttpRequest, token: str) -> HttpResponse:
    """Complete the study and send the participant to Prolific with the completion code."""
    participant = _participant_or_404(token)
    if not participant_complete(participant=participant):
        return _home(participant)
    return HttpResponseRedirect(prolific_completion_url(participant.study.completion_code))


@never_cache
@require_POST
def familiarity(request: HttpRequest, token: str) -> HttpResponse:
    """Store which famous persons the intruder had heard of; only on the debrief, once."""
    participant = _participant_or_404(token)
    study = participant.study
    try:
        known = {int(value) for value in request.POST.getlist("known")}
        familiarity_record(participant=participant, known=known)
    except (ValueError, FamiliarityRefused):
        return _message(
            request,
            title="Not saved",
            text="This question is asked once, at the end of the study.",
            status=409,
            study=study,
        )
    return _message(
        request,
        title="Thank you",
        text="Your answer is saved. Please submit your completion code on Prolific.",
        study=study,
        completion_url=prolific_completion_url(study.completion_code),
    )


# The participant flow as a table of pages ---------------------------------------------------


def _no_content(participant: Participant, current: CurrentStep) -> PageContent:
    return PageContent()


def _write_content(participant: Participant, current: CurrentStep) -> PageContent:
    done, total = writing_task_counts(participant=participant)
    task = current.task
    return PageContent(
        target=task.target,
        position=task.position,
        number=done + 1,
        total=total,
        rejected=form_state_for(participant=participant, task=write_task_key(task.position)),
    )


def _judge_content(participant: Participant, current: CurrentStep) -> PageContent:
    assignment = current.assignment
    return PageContent(
        assignment=assignment,
        number=current.completed + 1,
        rejected=form_state_for(participant=participant, task=judge_task_key(assignment.pk)),
        seconds_left=_seconds_left(assignment, participant.study),
        view_token=page_view_serve(assignment=assignment).token,
    )


def _check_content(participant: Participant, current: CurrentStep) -> PageContent:
    return PageContent(
        check=current.check,
        rejected=form_state_for(participant=participant, task=check_task_key(current.check.pk)),
    )


def _debrief_content(participant: Participant, current: CurrentStep) -> PageContent:
    study = participant.study
    # The debrief comes after the last answer is locked: only now may it name the persons.
    familiarity = tuple(familiarity_persons(study)) if familiarity_due(participant) else ()
    if study.kind != Study.Kind.INTRUDER or current.completed >= study.items_per_participant:
        return PageContent(completed=current.completed, familiarity=familiarity)
    reason, reachable = intruder_short_run_reason(participant=participant)
    return PageContent(
        completed=current.completed,
        short_reason=reason,
        reachable=reachable,
        familiarity=familiarity,
    )


# What the researcher's preview shows on a page: its plan's n-th text or target, nothing stored.


def _no_preview_content(
    study: Study, plan: PreviewPlan, number: int, rejected: RejectedAnswer | None
) -> PageContent:
    return PageContent()


def _write_preview(
    study: Study, plan: PreviewPlan, number: int, rejected: RejectedAnswer | None
) -> PageContent:
    target = plan.targets[number - 1]
    return PageContent(
        target=target, position=number, number=number, total=plan.items, rejected=rejected
    )


def _judge_preview(
    study: Study, plan: PreviewPlan, number: int, rejected: RejectedAnswer | None
) -> PageContent:
    return PageContent(
        assignment=SimpleNamespace(pk=number, text=plan.texts[number - 1]),
        number=number,
        rejected=rejected,
        seconds_left=study.time_limit_minutes * 60,
    )


def _debrief_preview(
    study: Study, plan: PreviewPlan, number: int, rejected: RejectedAnswer | None
) -> PageContent:
    # A preview intruder has judged every text drawn; a writer's debrief counts none.
    return PageContent(completed=plan.items if study.kind == Study.Kind.INTRUDER else 0)


@dataclass(frozen=True)
class Page:
    """One page of the participant flow, as participants and the researcher's preview see it.

    oTree's `page_sequence` is the model: a step is one row of `PAGES` (its template, the
    context built from what it shows, the URL its form posts to and the view that takes the
    post), and the participant URLs and the preview are both made from the table. Which step
    a participant is on is derived from what is stored (`selectors.participant.participant_step`).
    """

    step: str
    template: str
    context: Callable[[Study, PageContent], dict]
    path: str  # the form posts to p/<token>/<path>/, URL name "participant-<path>"
    view: Callable[[HttpRequest, str], HttpResponse]
    content: Callable[[Participant, CurrentStep], PageContent] = _no_content
    preview_content: Callable[[Study, PreviewPlan, int, RejectedAnswer | None], PageContent] = (
        _no_preview_content
    )
    per_item: bool = False  # shown once per text or writing task
    fields: tuple[str, ...] = ()  # the answers an item page posts, checked and kept if rejected
    preview_path: str = ""  # the preview's URL step, where it is not the step's name

    @property
    def url_name(self) -> str:
        """Return the name of the URL the participant's form posts to."""
        return f"participant-{self.path}"

    @property
    def preview_step(self) -> str:
        """Return the step as the preview's URLs name it."""
        return self.preview_path or self.step


PAGES = {
    page.step: page
    for page in (
        Page(Step.CONSENT, "participant/consent.html", consent_page_context, "consent", consent),
        Page(
            Step.INSTRUCTIONS,
            "participant/instructions.html",
            instructions_page_context,
            "instructions",
            instructions,
        ),
        Page(
            Step.WRITE,
            "participant/write.html",
            write_page_context,
            "write",
            write,
            content=_write_content,
            preview_content=_write_preview,
            per_item=True,
            fields=("text",),
        ),
        Page(
            Step.JUDGE,
            "participant/judge.html",
            judge_page_context,
            "judge",
            judge,
            content=_judge_content,
            preview_content=_judge_preview,
            per_item=True,
            fields=JUDGMENT_FIELDS,
            preview_path="text",
        ),
        Page(
            Step.CHECK,
            "participant/check.html",
            attention_check_page_context,
            "check",
            attention_check,
            content=_check_content,
        ),
        Page(
            Step.DEBRIEF,
            "participant/debrief.html",
            debrief_page_context,
            "finish",
            finish,
            content=_debrief_content,
            preview_content=_debrief_preview,
        ),
    )
}

# The pages each kind of study walks, in order. An intruder's attention checks come between
# two texts when due (services.attention), so they are no step of the sequence.
PAGE_SEQUENCE = {
    Study.Kind.COLLECTION: (PAGES[Step.CONSENT], PAGES[Step.WRITE], PAGES[Step.DEBRIEF]),
    Study.Kind.INTRUDER: (
        PAGES[Step.CONSENT],
        PAGES[Step.INSTRUCTIONS],
        PAGES[Step.JUDGE],
        PAGES[Step.DEBRIEF],
    ),
}

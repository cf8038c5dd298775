"""The participant flow's pages, one class each, and the order each kind of study walks them.

A page with a form shows what the participant's stored state (or the researcher's preview
plan) holds and takes its post; a status page says where the participant stands. The
participant URLs (`participant_urls`), the one page a participant sees (`flow.home`) and the
preview (`views.preview`) are all made from these tables, so a new step is one class.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from datetime import timedelta
from types import SimpleNamespace
from typing import TYPE_CHECKING, ClassVar

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils import timezone

from intruder.enrolment import EnrolmentRefused, prolific_completion_url
from intruder.evidence.attention import MAX_ANSWER_CHARS, attention_check_submit
from intruder.evidence.canary import canary_encoded, canary_instruction
from intruder.evidence.page_views import page_view_report, page_view_serve
from intruder.models import Assignment, Participant, PersonGroup, Study
from intruder.prolific.selectors import prolific_submission_status
from intruder.selectors.participant import (
    SHORT_FULL,
    Step,
    assignment_completed_count,
    intruder_short_run_reason,
    intruder_text_view,
    writing_task_counts,
)
from intruder.services.familiarity import (
    FamiliarityRefused,
    familiarity_due,
    familiarity_list,
    familiarity_record,
)
from intruder.services.form_state import (
    FAMILIARITY_TASK,
    RejectedAnswer,
    check_task_key,
    form_state_clear,
    form_state_for,
    form_state_keep,
    judge_task_key,
    write_task_key,
)
from intruder.services.judgments import JudgmentRejected, judgment_submit
from intruder.services.participants import (
    CurrentStep,
    participant_complete,
    participant_consent_decline,
    participant_consent_give,
    participant_current_step,
    participant_instructions_confirm,
)
from intruder.services.writing import description_submit
from intruder.views.participant.base import (
    Page,
    PageContent,
    StatusPage,
    home_redirect,
    refusal_page,
)
from intruder.views.participant.forms import JUDGMENT_FIELDS, DescriptionForm, JudgmentForm

if TYPE_CHECKING:
    from intruder.services.preview import PreviewPlan

# What each telemetry signal records, in the consent page's words (evidence.telemetry).
SIGNAL_WORDS = {
    "timing": "how long you spend on each page, and when and how long you type",
    "keystrokes": "how many keys you press (not which ones)",
    "paste": "whether you paste into an answer, and how many characters",
    "copy": "whether you copy the text shown, and how many characters",
    "focus": "how often and how long you leave the page (another tab or window)",
}

# Late answers come from participants the sweep has just timed out (services.judgments).
JUDGING_STATUSES = (Participant.Status.STARTED, Participant.Status.TIMED_OUT)


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


def _progress(number: int, total: int) -> dict:
    return {
        "number": number,
        "total": total,
        "progress_done": number - 1,
        "progress_pct": int(100 * (number - 1) / total) if total else 0,
    }


TEXT, PLACEHOLDER, CANARY = "text", "placeholder", "canary"


def _text_segments(view, *, canary: str = "") -> list[tuple[str, str]]:
    """Split an anonymized text into (kind, chunk) pieces: text, placeholders (highlighted)
    and, with `canary`, its hidden instruction for pages read without JavaScript, after the
    first sentence as the page's script places it (a plain HTTP reader meets it too)."""
    segments: list[tuple[str, str]] = []
    if not view.placeholders:
        segments = [(TEXT, view.text)]
    else:
        pattern = re.compile("|".join(re.escape(p) for p in view.placeholders))
        last = 0
        for match in pattern.finditer(view.text):
            if match.start() > last:
                segments.append((TEXT, view.text[last : match.start()]))
            segments.append((PLACEHOLDER, match.group(0)))
            last = match.end()
        if last < len(view.text):
            segments.append((TEXT, view.text[last:]))
    if not canary:
        return segments
    slot = (CANARY, canary_instruction(canary))
    for index, (kind, chunk) in enumerate(segments):
        at = chunk.find(". ") if kind == TEXT else -1
        if at != -1:
            split = [(TEXT, chunk[: at + 2]), slot, (TEXT, chunk[at + 2 :])]
            return segments[:index] + split + segments[index + 1 :]
    return [*segments, slot]


class ConsentPage(Page):
    step = Step.CONSENT
    template = "participant/consent.html"
    path = "consent"

    def context(self, study: Study, content: PageContent) -> dict:
        """What the study's telemetry records, in plain words."""
        return {"recorded_signals": recorded_signals(study)}

    def post(self, request: HttpRequest, participant: Participant) -> HttpResponse:
        """Record the consent decision: agree goes on, decline ends with 'please return'."""
        if request.POST.get("decision") == "agree":
            try:
                participant_consent_give(participant=participant)
            except EnrolmentRefused as refusal:
                return refusal_page(request, refusal, participant.study)
        elif request.POST.get("decision") == "decline":
            participant_consent_decline(participant=participant)
        return home_redirect(participant)


class InstructionsPage(Page):
    step = Step.INSTRUCTIONS
    template = "participant/instructions.html"  # the template holds them all
    path = "instructions"

    def post(self, request: HttpRequest, participant: Participant) -> HttpResponse:
        """Record that the intruder has read the instructions."""
        participant_instructions_confirm(participant=participant)
        return home_redirect(participant)


class WritePage(Page):
    """A writer's description of one target person."""

    step = Step.WRITE
    template = "participant/write.html"
    path = "write"
    per_item = True
    fields = ("text",)
    forgets_drafts = True

    def content(self, participant: Participant, current: CurrentStep) -> PageContent:
        done, total = writing_task_counts(participant=participant)
        task = current.task
        return PageContent(
            target=task.target,
            position=task.position,
            number=done + 1,
            total=total,
            rejected=form_state_for(participant=participant, task=write_task_key(task.position)),
        )

    def preview_content(
        self, study: Study, plan: PreviewPlan, number: int, rejected: RejectedAnswer | None
    ) -> PageContent:
        target = plan.targets[number - 1]
        return PageContent(
            target=target, position=number, number=number, total=plan.items, rejected=rejected
        )

    def context(self, study: Study, content: PageContent) -> dict:
        target, rejected = content.target, content.rejected
        return {
            "position": content.position,
            "target": target,
            "is_famous": target.group == PersonGroup.FAMOUS,
            "is_semifamous": target.group == PersonGroup.SEMIFAMOUS,
            "is_fictitious": target.group == PersonGroup.FICTITIOUS,
            "profile": target.profile or {},
            **_progress(content.number, content.total),
            "text_value": rejected.values.get("text", "") if rejected else "",
            "errors": rejected.errors if rejected else {},
            "min_chars": study.min_description_chars,
            "telemetry_signals": " ".join(study.telemetry_signals or []),
        }

    def participant_context(self, participant: Participant, content: PageContent) -> dict:
        # The browser keeps the unsent draft under this key (cleared once it is stored).
        return {"draft_key": f"intruder-draft:{participant.token}:{content.position}"}

    def post(self, request: HttpRequest, participant: Participant) -> HttpResponse:
        """Store one description; a rejected one is kept with its error and shown after redirect."""
        form = DescriptionForm(request.POST)
        form.is_valid()
        position = form.cleaned_data.get("position")
        current = participant_current_step(participant=participant)
        if current.step != Step.WRITE or position != current.task.position:
            # A stale tab posting a task already written (no-op) or one not reached yet.
            return home_redirect(participant)
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
        return home_redirect(participant)


class JudgePage(Page):
    """An intruder's text: who is it?"""

    step = Step.JUDGE
    template = "participant/judge.html"
    path = "judge"
    per_item = True
    fields = JUDGMENT_FIELDS
    preview_path = "text"

    def content(self, participant: Participant, current: CurrentStep) -> PageContent:
        assignment = current.assignment
        return PageContent(
            assignment=assignment,
            number=current.completed + 1,
            rejected=form_state_for(participant=participant, task=judge_task_key(assignment.pk)),
            seconds_left=_seconds_left(assignment, participant.study),
            view_token=page_view_serve(assignment=assignment).token,
        )

    def preview_content(
        self, study: Study, plan: PreviewPlan, number: int, rejected: RejectedAnswer | None
    ) -> PageContent:
        return PageContent(
            assignment=SimpleNamespace(pk=number, text=plan.texts[number - 1]),
            number=number,
            rejected=rejected,
            seconds_left=study.time_limit_minutes * 60,
        )

    def context(self, study: Study, content: PageContent) -> dict:
        assignment, rejected = content.assignment, content.rejected
        canary = getattr(assignment, "canary", "")
        return {
            "assignment_id": assignment.pk,
            "segments": _text_segments(intruder_text_view(text=assignment.text), canary=canary),
            # Decoded into the text by the page's script, hidden from sight and from the
            # accessibility tree; see evidence.canary.
            "canary_encoded": canary_encoded(canary) if canary else "",
            # The served page view the telemetry must name (evidence.page_views); none in a
            # researcher's preview.
            "view_token": content.view_token,
            "telemetry_signals": " ".join(study.telemetry_signals or []),
            "discourage_copy": study.discourage_copy,
            **_progress(content.number, study.items_per_participant),
            "values": rejected.values if rejected else {},
            "errors": rejected.errors if rejected else {},
            "seconds_left": content.seconds_left,
            "time_limit_minutes": study.time_limit_minutes,
            "warn_seconds": time_warning_seconds(study),
        }

    def post(self, request: HttpRequest, participant: Participant) -> HttpResponse:
        """Store one judgment; a rejected one is kept with its errors and shown after redirect."""
        form = JudgmentForm(request.POST)
        if "assignment_id" not in request.POST or participant.status not in JUDGING_STATUSES:
            return home_redirect(participant)
        if not form.is_valid():
            _keep_rejected_judgment(participant, request.POST, form.errors)
            if form.cleaned_data.get("assignment_id"):
                _keep_rejected_telemetry(
                    participant, request.POST, form.cleaned_data["assignment_id"]
                )
            return home_redirect(participant)
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
        return home_redirect(participant)


def _keep_rejected_telemetry(participant: Participant, posted: dict, assignment_id: int) -> None:
    """Count a rejected answer's typing for its page view: the next view shows it prefilled."""
    page_view_report(
        participant=participant, raw=posted.get("telemetry", ""), assignment_id=assignment_id
    )


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


class CheckPage(Page):
    """An attention check between two texts (when due; evidence.attention)."""

    step = Step.CHECK
    template = "participant/check.html"
    path = "check"

    def content(self, participant: Participant, current: CurrentStep) -> PageContent:
        return PageContent(
            check=current.check,
            rejected=form_state_for(participant=participant, task=check_task_key(current.check.pk)),
        )

    def context(self, study: Study, content: PageContent) -> dict:
        """The check's instruction, never its answer."""
        check, rejected = content.check, content.rejected
        return {
            "check_id": check.pk,
            "prompt": check.prompt,
            "values": rejected.values if rejected else {},
            "errors": rejected.errors if rejected else {},
        }

    def post(self, request: HttpRequest, participant: Participant) -> HttpResponse:
        """Score an attention check's answer; an empty one is kept and asked again after redirect.

        The page never says whether the answer was right (a failed check only flags answers).
        """
        check_id = request.POST.get("check_id", "")
        if participant.status != Participant.Status.STARTED or not check_id.isdigit():
            return home_redirect(participant)
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
        return home_redirect(participant)


@dataclass(frozen=True)
class ShortRun:
    """An intruder who finished with fewer texts than announced, and why (a
    `selectors.participant.SHORT_*` reason; `reachable`: the most one intruder can get)."""

    judged: int
    announced: int
    reason: str
    reachable: int


class DebriefPage(Page):
    """The end: the completion code, why a run ended early, and the familiarity question."""

    step = Step.DEBRIEF
    template = "participant/debrief.html"
    path = "finish"
    forgets_drafts = True

    def content(self, participant: Participant, current: CurrentStep) -> PageContent:
        study = participant.study
        # The debrief comes after the last answer is locked: only now may it name the persons.
        familiarity = tuple(familiarity_list(participant)) if familiarity_due(participant) else ()
        rejected = form_state_for(participant=participant, task=FAMILIARITY_TASK)
        if study.kind != Study.Kind.INTRUDER or current.completed >= study.items_per_participant:
            return PageContent(
                completed=current.completed, familiarity=familiarity, rejected=rejected
            )
        reason, reachable = intruder_short_run_reason(participant=participant)
        return PageContent(
            completed=current.completed,
            short_reason=reason,
            reachable=reachable,
            familiarity=familiarity,
            rejected=rejected,
        )

    def preview_content(
        self, study: Study, plan: PreviewPlan, number: int, rejected: RejectedAnswer | None
    ) -> PageContent:
        # A preview intruder has judged every text drawn; a writer's debrief counts none.
        return PageContent(completed=plan.items if study.kind == Study.Kind.INTRUDER else 0)

    def context(self, study: Study, content: PageContent) -> dict:
        """The code as text, and why a run ended early if it did."""
        short = None
        if study.kind == Study.Kind.INTRUDER and content.completed < study.items_per_participant:
            short = ShortRun(
                judged=content.completed,
                announced=study.items_per_participant,
                reason=content.short_reason or SHORT_FULL,
                reachable=content.reachable,
            )
        rejected = content.rejected or RejectedAnswer()
        return {
            "completion_code": study.completion_code,
            "short": short,
            "familiarity": content.familiarity,
            "familiarity_error": " ".join(rejected.errors.get("familiarity", [])),
            "familiarity_ticked": set(rejected.values.get("known", "").split(",")) - {""},
            "familiarity_none": bool(rejected.values.get("none_of_these")),
        }

    def post(self, request: HttpRequest, participant: Participant) -> HttpResponse:
        """Complete the study, store the familiarity answer posted with it, go to Prolific.

        One form, one button: what is ticked is saved by "Finish" (a second button once lost
        it). Nothing ticked is no answer, and still finishes; a contradictory answer comes
        back with its error (post/redirect/get), and the participant is completed either way.
        """
        if not participant_complete(participant=participant):
            return home_redirect(participant)
        if familiarity_due(participant):
            known = request.POST.getlist("known")
            none_of_these = bool(request.POST.get("none_of_these"))
            try:
                ticked = {int(place) for place in known}
                if ticked or none_of_these:
                    familiarity_record(
                        participant=participant, ticked=ticked, none_of_these=none_of_these
                    )
            except (ValueError, FamiliarityRefused) as refusal:
                error = str(refusal) if isinstance(refusal, FamiliarityRefused) else "Not a name."
                form_state_keep(
                    participant=participant,
                    task=FAMILIARITY_TASK,
                    values={"known": ",".join(known), "none_of_these": none_of_these or ""},
                    errors={"familiarity": [error]},
                )
                return home_redirect(participant)
        form_state_clear(participant=participant)
        return HttpResponseRedirect(prolific_completion_url(participant.study.completion_code))


class ReturnedPage(StatusPage):
    step = Step.RETURNED
    title = "You have left this study"
    text = (
        "You did not give consent, so you cannot take part. Please return the study on "
        "Prolific (\u201cReturn submission\u201d). No completion code is given."
    )
    # What Prolific said, when it ended the submission (webhook), in the participant's words.
    prolific_texts: ClassVar[dict[str, str]] = {
        "RETURNED": (
            "You returned this study on Prolific, so it has ended for you here. Nothing more "
            "is needed from you, and no completion code is given."
        ),
        "REJECTED": (
            "Your submission to this study was rejected on Prolific, so the study has ended "
            "for you here. Prolific shows you the researcher's reason."
        ),
    }

    def message(self, participant: Participant) -> tuple[str, str, str]:
        text = self.prolific_texts.get(prolific_submission_status(participant), self.text)
        return self.title, text, ""


class TimedOutPage(StatusPage):
    step = Step.TIMED_OUT
    title = "Time limit reached"
    text = (
        "The time limit for this study has passed before you had finished a text (or your "
        "first text stayed unanswered while others were waiting), so your place was given to "
        "someone else. Please return the study on Prolific (\u201cReturn submission\u201d)."
    )

    def message(self, participant: Participant) -> tuple[str, str, str]:
        if prolific_submission_status(participant) == "TIMED-OUT":
            # Prolific ended the submission: there is nothing to return or submit there.
            return (
                self.title,
                "Prolific's time limit for this study passed, so Prolific ended your "
                "submission and the study has ended for you here. Nothing more is needed from "
                "you; the answers you finished are kept.",
                "",
            )
        judged = assignment_completed_count(participant=participant)
        if not judged:
            return super().message(participant)
        # Work done before the limit is paid for, as Prolific expects (docs/participants.md).
        text = (
            f"The time for your text ran out and it was given to someone else, so the study "
            f"ends here for you. Your answers to the {judged} text{'s' if judged != 1 else ''} "
            "you finished are saved, and they count: please submit the completion code below "
            "on Prolific."
        )
        return self.title, text, prolific_completion_url(participant.study.completion_code)


class NothingLeftPage(StatusPage):
    step = Step.NOTHING_LEFT
    title = "No texts available"
    text = (
        "There is nothing left for you to do in this study right now. "
        "Please return the study on Prolific."
    )


class FullPage(StatusPage):
    step = Step.FULL
    title = "This study is full"
    text = (
        "Every text in this study is taken right now. Please reload this page in a few "
        "minutes, or return the study on Prolific."
    )


class CompletedPage(StatusPage):
    step = Step.COMPLETED
    title = "You have already completed this study"
    text = (
        "Thank you. You cannot take part again. If Prolific has not recorded your submission "
        "yet, enter the completion code below on Prolific, or use the button."
    )

    def message(self, participant: Participant) -> tuple[str, str, str]:
        return self.title, self.text, prolific_completion_url(participant.study.completion_code)

    def render(
        self, request: HttpRequest, participant: Participant, current: CurrentStep
    ) -> HttpResponse:
        """Show the debrief again while its familiarity question is open (reload resumes).

        Seeing the debrief completes a participant, so without this a reload, or an answer
        sent back with an error, would lose the question.
        """
        if familiarity_due(participant):
            # The completed step counts no texts: the debrief needs the judged ones.
            judged = assignment_completed_count(participant=participant)
            debrief = replace(current, step=Step.DEBRIEF, completed=judged)
            return PAGES[Step.DEBRIEF].render(request, participant, debrief)
        return super().render(request, participant, current)


def _by_step(*pages: Page) -> dict[str, Page]:
    return {page.step: page for page in pages}


# The pages with a form (each posts to its own URL), and the status pages.
PAGES = _by_step(
    ConsentPage(), InstructionsPage(), WritePage(), JudgePage(), CheckPage(), DebriefPage()
)
STATUS_PAGES = _by_step(
    ReturnedPage(), TimedOutPage(), NothingLeftPage(), FullPage(), CompletedPage()
)
# Every step a participant can be on, and the page that shows it.
STEP_PAGES = PAGES | STATUS_PAGES

# The pages each kind of study walks, in order. An intruder's attention checks come between
# two texts when due (evidence.attention), so they are no step of the sequence.
PAGE_SEQUENCE = {
    Study.Kind.COLLECTION: (PAGES[Step.CONSENT], PAGES[Step.WRITE], PAGES[Step.DEBRIEF]),
    Study.Kind.INTRUDER: (
        PAGES[Step.CONSENT],
        PAGES[Step.INSTRUCTIONS],
        PAGES[Step.JUDGE],
        PAGES[Step.DEBRIEF],
    ),
}

"""Running a study's Prolific side from the platform: publish, mirror, review, bonus.

Every call goes through `ProlificClient`, so a dry-run client prints what would be sent and
nothing here is stored. Every approval, rejection and bonus is a `ProlificAction` row keyed
by (study, kind, participant[, bonus label]): a retry re-sends the stored action, a
succeeded one is never sent again, and a bonus is set up once and paid once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from intruder.enrolment import entry_link
from intruder.evidence.selectors import FLAG_LABELS, ParticipantFlags, participant_flag_summary
from intruder.exceptions import IntruderError
from intruder.models import Assignment, Participant, Study
from intruder.prolific.claims import claim_draft
from intruder.prolific.client import (
    ProlificAuthError,
    ProlificClient,
    ProlificError,
    ProlificNotFound,
    StudyDraft,
)
from intruder.prolific.models import ProlificAction, ProlificStudyState, ProlificSubmission
from intruder.selectors.counts import count_by
from intruder.selectors.monitoring import ParticipantRow, participant_rows

TRANSITIONS = {"publish": "PUBLISH", "pause": "PAUSE", "resume": "START", "stop": "STOP"}
# Prolific's transitions of a study, by the status it is in (docs.prolific.com, study
# statuses): a draft is published; an active study paused or stopped; a paused one resumed
# or stopped. Awaiting review and completed studies take none.
ALLOWED_TRANSITIONS: dict[str, tuple[str, ...]] = {
    "UNPUBLISHED": ("publish",),
    "SCHEDULED": ("stop",),
    "ACTIVE": ("pause", "stop"),
    "PAUSED": ("resume", "stop"),
}


def transitions_allowed(status: str) -> tuple[str, ...]:
    """Return the transitions Prolific allows from `status` (none when it is unknown)."""
    return ALLOWED_TRANSITIONS.get((status or "").upper(), ())


# Prolific's device_compatibility values.
DEVICES = ("desktop", "tablet", "mobile")
# Prolific asks rejections for a message of at least 100 characters and a category.
MIN_REJECTION_CHARS = 100
# Approving someone who did not complete here needs the researcher's reason, this long.
MIN_OVERRIDE_CHARS = 10
# The "here" status of a Prolific submission with no participant on the platform.
NEVER_STARTED = "never started here"
# Prolific's statuses of a submission whose participant has not submitted yet.
IN_PROGRESS = ("ACTIVE", "RESERVED")
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)


class ProlificActionRefused(IntruderError):
    """The researcher's request cannot be sent (e.g. a rejection without a reason)."""


def prolific_study_verify(prolific_study_id: str, *, client: ProlificClient) -> None:
    """Refuse a Prolific study ID that the token's workspace does not hold.

    Prolific answers 404 for an unknown study and 403 for another workspace's; the answer's
    `workspace` (where given) must be PROLIFIC_WORKSPACE_ID (where set). An unreachable
    Prolific refuses too: the ID is stored only once it is known to be this workspace's.
    """
    try:
        remote = client.study_get(prolific_study_id)
    except (ProlificNotFound, ProlificAuthError):
        raise ProlificActionRefused(
            f"Prolific has no study {prolific_study_id} in this token's workspace: use the "
            "ID of a study your workspace owns (Prolific > study > Study ID)."
        ) from None
    except ProlificError as error:
        raise ProlificActionRefused(
            f"Prolific could not confirm study {prolific_study_id} ({error}); try again."
        ) from None
    workspace = settings.PROLIFIC_WORKSPACE_ID
    if workspace and remote.get("workspace") and remote["workspace"] != workspace:
        raise ProlificActionRefused(
            f"Prolific study {prolific_study_id} belongs to another workspace."
        )


def study_state(study: Study) -> ProlificStudyState:
    return ProlificStudyState.objects.get_or_create(study=study)[0]


def draft_build(
    *,
    study: Study,
    entry_url: str,
    places: int,
    reward_minor: int,
    estimated_minutes: int,
    completion_action: str = ProlificStudyState.CompletionAction.MANUALLY_REVIEW,
    name: str = "",
    description: str = "",
    devices: tuple[str, ...] = ("desktop",),
) -> StudyDraft:
    """Return the draft as it will be sent (the preview shows it; creating sends it).

    Name and description are what participants read on Prolific; without them the
    participant-facing title stands in (the page asks for both).
    """
    if places < 1 or reward_minor < 1 or estimated_minutes < 1:
        raise ProlificActionRefused("Places, reward and estimated time must be at least 1.")
    unknown = set(devices) - set(DEVICES)
    if not devices or unknown:
        raise ProlificActionRefused(f"Devices must be some of {', '.join(DEVICES)}.")
    return StudyDraft(
        name=name.strip() or study.participant_title,
        internal_name=study.slug,
        description=description.strip() or study.participant_title,
        external_study_url=entry_link(entry_url),
        completion_code=study.completion_code,
        completion_action=completion_action,
        total_available_places=places,
        reward=reward_minor,
        estimated_completion_time=estimated_minutes,
        device_compatibility=tuple(d for d in DEVICES if d in devices),
    )


def study_draft_create(
    *,
    study: Study,
    client: ProlificClient,
    entry_url: str,
    places: int,
    reward_minor: int,
    estimated_minutes: int,
    completion_action: str = ProlificStudyState.CompletionAction.MANUALLY_REVIEW,
    name: str = "",
    description: str = "",
    devices: tuple[str, ...] = ("desktop",),
    user: Any = None,
) -> dict:
    """Create the Prolific draft and store its ID as the study's Prolific study ID.

    Refused when the study already has a Prolific study ID (one Prolific study per study).
    The ID is claimed for the study at once (`claims`): the account that made the draft
    through the platform owns it, even after the field is cleared.
    """
    if study.prolific_study_id:
        raise ProlificActionRefused(
            f"This study already has a Prolific study ID ({study.prolific_study_id})."
        )
    draft = draft_build(
        study=study,
        entry_url=entry_url,
        places=places,
        reward_minor=reward_minor,
        estimated_minutes=estimated_minutes,
        completion_action=completion_action,
        name=name,
        description=description,
        devices=devices,
    )
    created = client.study_create(draft)
    if created.get("dry_run"):
        return created
    with transaction.atomic():
        claim_draft(study=study, prolific_study_id=created["id"], user=user)
        Study.objects.filter(pk=study.pk).update(prolific_study_id=created["id"])
        study.prolific_study_id = created["id"]
        ProlificStudyState.objects.update_or_create(
            study=study,
            defaults={
                "status": created.get("status", "UNPUBLISHED"),
                "status_at": timezone.now(),
                "places": places,
                "reward_minor": reward_minor,
                "estimated_minutes": estimated_minutes,
                "completion_action": completion_action,
            },
        )
    return created


def study_transition(*, study: Study, client: ProlificClient, action: str) -> dict:
    """Publish, pause, resume or stop the Prolific study; mirror the status it answers.

    Only the transitions Prolific allows from the last known status are sent.
    """
    if action not in TRANSITIONS:
        raise ProlificActionRefused(f"Unknown action {action!r}.")
    if not study.prolific_study_id:
        raise ProlificActionRefused("Create the Prolific draft first.")
    status = study_state(study).status
    if not client.dry_run and action not in transitions_allowed(status):
        allowed = ", ".join(transitions_allowed(status)) or "none"
        raise ProlificActionRefused(
            f"Prolific does not allow “{action}” from status {status or 'unknown'} "
            f"(allowed: {allowed}). Sync first if the status shown is out of date."
        )
    answer = client.study_transition(study.prolific_study_id, TRANSITIONS[action])
    if not answer.get("dry_run") and answer.get("status"):
        _mirror_status(study, answer["status"], at=timezone.now())
    return answer


def _mirror_status(study: Study, status: str, *, at: datetime) -> None:
    state = study_state(study)
    ProlificStudyState.objects.filter(pk=state.pk).filter(
        Q(status_at__isnull=True) | Q(status_at__lte=at)
    ).update(status=status, status_at=at)


def study_sync(*, study: Study, client: ProlificClient) -> ProlificStudyState | None:
    """Read Prolific's study and submissions now; store the status, counts and submissions.

    Returns None in dry-run mode. The read is as of now, so it updates only rows whose last
    known state is older (a webhook that arrived meanwhile is kept).
    """
    if not study.prolific_study_id:
        raise ProlificActionRefused("This study has no Prolific study ID.")
    remote = client.study_get(study.prolific_study_id)
    submissions = client.submissions_list(study.prolific_study_id)
    if remote.get("dry_run"):
        return None
    now = timezone.now()
    counts: dict[str, int] = {}
    for sub in submissions:
        counts[sub.status] = counts.get(sub.status, 0) + 1
        row, created = ProlificSubmission.objects.get_or_create(
            submission_id=sub.id,
            defaults={
                "study": study,
                "prolific_pid": sub.participant_id,
                "status": sub.status,
                "status_at": now,
            },
        )
        if not created:
            ProlificSubmission.objects.filter(pk=row.pk, status_at__lte=now).update(
                status=sub.status, status_at=now
            )
    if remote.get("status"):
        _mirror_status(study, remote["status"], at=now)
    ProlificStudyState.objects.filter(study=study).update(counts=counts, synced_at=now)
    return study_state(study)


# --- review -----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SubmissionFacts:
    """A participant's Prolific submission beside their progress here: what the review list
    and the bulk preview both show."""

    prolific_pid: str
    submission_id: str
    prolific_status: str
    platform_status: str
    items_done: int
    items_total: int
    time_spent: str
    flags: ParticipantFlags | None = None

    @classmethod
    def fields(cls, row: ParticipantRow, sub: ProlificSubmission | None) -> dict[str, object]:
        """Return these fields from a participant's row and their submission (or None)."""
        return {
            "prolific_pid": row.prolific_pid,
            "submission_id": sub.submission_id if sub else "",
            "prolific_status": sub.status if sub else "",
            "platform_status": row.status,
            "items_done": row.items_done,
            "items_total": row.items_total,
            "time_spent": row.time_spent_text,
        }

    @classmethod
    def never_started(cls, sub: ProlificSubmission) -> dict[str, object]:
        """Return these fields for a submission whose participant never opened the study here
        (they entered a code on Prolific without starting, or Prolific placed them)."""
        return {
            "prolific_pid": sub.prolific_pid,
            "submission_id": sub.submission_id,
            "prolific_status": sub.status,
            "platform_status": NEVER_STARTED,
            "items_done": 0,
            "items_total": 0,
            "time_spent": "–",
        }

    @property
    def flag_lines(self) -> list[tuple[str, str, bool]]:
        """(label, reasons, excludes) per flag code, for the tables."""
        return flag_lines(self.flags)


@dataclass(frozen=True, kw_only=True)
class SubmissionRow(SubmissionFacts):
    """One participant as the review list shows them."""

    identified: int
    actions: tuple[str, ...]

    @property
    def excluded(self) -> bool:
        """At least one answer is excluded by the study's rules (or a confirmed review)."""
        return self.flags is not None and self.flags.excluded

    @property
    def approvable(self) -> bool:
        """Completed here and awaiting review on Prolific (the study's approval rule)."""
        return self.platform_status == "completed" and self.prolific_status == "AWAITING REVIEW"

    @property
    def note(self) -> str:
        """What the two sides disagree on, in words ("" when they agree)."""
        completed = self.platform_status == Participant.Status.COMPLETED
        if self.platform_status == NEVER_STARTED:
            return (
                "Never started here: Prolific lists this submission but the participant never "
                "opened the study; approving needs a reason."
            )
        if completed and self.prolific_status in IN_PROGRESS:
            return "Reached the completion code here, never came back to Prolific (yet)."
        if not completed and self.prolific_status == "AWAITING REVIEW":
            if self.platform_status == Participant.Status.TIMED_OUT and self.items_done:
                return "Timed out after finished work and was shown the code: their work is paid."
            return "Submitted on Prolific without completing here: approving needs a reason."
        return ""


def flag_lines(flags: ParticipantFlags | None) -> list[tuple[str, str, bool]]:
    """Return (label, reasons, whether it excludes) per flag code of a participant."""
    if flags is None:
        return []
    return [
        (
            FLAG_LABELS.get(code, code),
            "; ".join(dict.fromkeys(reasons)),
            code in flags.excluded_reasons,
        )
        for code, reasons in flags.reasons.items()
    ]


def submission_rows(study: Study) -> list[SubmissionRow]:
    """Return each participant with Prolific's status, completion, time and past actions."""
    subs = {s.prolific_pid: s for s in ProlificSubmission.objects.filter(study=study)}
    identified = dict(
        Participant.objects.filter(study=study)
        .annotate(n=Count("judgments", filter=Q(judgments__identified=True)))
        .values_list("prolific_pid", "n")
    )
    actions: dict[str, list[str]] = {}
    for action in ProlificAction.objects.filter(study=study).order_by("created_at"):
        label = f"{action.kind} {action.status}"
        if action.amount is not None:
            label += f" {action.amount}"
        actions.setdefault(action.prolific_pid, []).append(label)
    summary = participant_flag_summary(study)
    rows = []
    for row in participant_rows(study):
        sub = subs.pop(row.prolific_pid, None)
        rows.append(
            SubmissionRow(
                **SubmissionFacts.fields(row, sub),
                identified=identified.get(row.prolific_pid, 0),
                actions=tuple(actions.get(row.prolific_pid, ())),
                flags=summary.get(row.pk),
            )
        )
    # Every submission Prolific reports is listed, so it can be approved or rejected here.
    for pid, sub in sorted(subs.items()):
        rows.append(
            SubmissionRow(
                **SubmissionFacts.never_started(sub),
                identified=0,
                actions=tuple(actions.get(pid, ())),
            )
        )
    return rows


def _claim(action: ProlificAction) -> ProlificAction | None:
    """Lock an action row for sending; None when it already succeeded (never sent twice).

    The conditional UPDATE takes the row lock (PostgreSQL) or the write lock (SQLite) first,
    so a concurrent retry of the same action waits and then sees it succeeded.
    """
    ProlificAction.objects.filter(pk=action.pk).update(attempts=F("attempts") + 1)
    action.refresh_from_db()
    return None if action.status == ProlificAction.Status.SUCCEEDED else action


def _submission_id(study: Study, pid: str) -> str:
    sub = ProlificSubmission.objects.filter(study=study, prolific_pid=pid).first()
    return sub.submission_id if sub else ""


def review_refusal(kind: str, reason: str, category: str) -> str | None:
    """Return why a review cannot be sent as asked (None when it can)."""
    if kind == ProlificAction.Kind.REJECT:
        if len(reason.strip()) < MIN_REJECTION_CHARS:
            return (
                f"A rejection needs a reason of at least {MIN_REJECTION_CHARS} characters "
                "(Prolific shows it to the participant)."
            )
        if category not in REJECTION_CATEGORIES:
            return f"Unknown rejection category {category!r}."
    elif kind != ProlificAction.Kind.APPROVE:
        return f"Unknown review {kind!r}."
    return None


def not_completed(study: Study, pids: list[str]) -> list[str]:
    """Return those of `pids` who never reached the completion code here.

    The code is shown on the debrief (completed) and, to an intruder timed out after
    finishing at least one text, on the time-out page: their work is paid for
    (docs/participants.md), so approving them needs no override.
    """
    shown_code = Q(status=Participant.Status.COMPLETED) | Q(
        status=Participant.Status.TIMED_OUT, assignments__status=Assignment.Status.COMPLETED
    )
    done = set(
        Participant.objects.filter(shown_code, study=study, prolific_pid__in=pids).values_list(
            "prolific_pid", flat=True
        )
    )
    return sorted(set(pids) - done)


def not_back_on_prolific(study: Study) -> list[str]:
    """Return who reached the completion code here but whose submission Prolific still
    lists as in progress (they have not entered the code there, or not yet)."""
    completed = Participant.objects.filter(
        study=study, status=Participant.Status.COMPLETED
    ).values_list("prolific_pid", flat=True)
    return sorted(
        ProlificSubmission.objects.filter(
            study=study, prolific_pid__in=completed, status__in=IN_PROGRESS
        ).values_list("prolific_pid", flat=True)
    )


def review_check(
    *, study: Study, kind: str, pids: list[str], reason: str, category: str, override: str = ""
) -> list[tuple[str, str, str]]:
    """Return the (pid, reason, category) reviews to send, or refuse the request as asked.

    Approving a participant who did not complete here needs `override` (10+ characters),
    recorded as the approval's reason.
    """
    if not pids:
        raise ProlificActionRefused("Select at least one participant.")
    refusal = review_refusal(kind, reason, category)
    if refusal:
        raise ProlificActionRefused(refusal)
    incomplete: list[str] = []
    if kind == ProlificAction.Kind.APPROVE:
        incomplete = not_completed(study, pids)
        override = " ".join(override.split())
        if incomplete and len(override) < MIN_OVERRIDE_CHARS:
            raise ProlificActionRefused(
                f"Not completed here: {', '.join(incomplete)}. Approve only those who reached "
                "the completion code, or give the reason to approve them anyway "
                f"(at least {MIN_OVERRIDE_CHARS} characters)."
            )
    overridden = f"Approved without completion here: {override}"
    return [(pid, overridden if pid in incomplete else reason, category) for pid in pids]


def submissions_review(
    *,
    study: Study,
    client: ProlificClient,
    pids: list[str],
    kind: str,
    user=None,
    reason: str = "",
    category: str = "OTHER",
    override: str = "",
) -> list[ProlificAction]:
    """Approve or reject submissions one by one; each outcome is recorded with who and why.

    A rejection needs a reason of 100+ characters and a Prolific category. Approving someone
    who did not complete here needs `override`, the researcher's reason (recorded with the
    approval). In dry-run mode the calls are printed and nothing is recorded.
    """
    plan = review_check(
        study=study, kind=kind, pids=pids, reason=reason, category=category, override=override
    )
    return reviews_send(study=study, client=client, kind=kind, plan=plan, user=user)


def reviews_send(
    *,
    study: Study,
    client: ProlificClient,
    kind: str,
    plan: list[tuple[str, str, str]],
    user=None,
) -> list[ProlificAction]:
    """Send each planned (pid, reason, category) review in turn; return the recorded actions.

    The plan is checked beforehand (`review_refusal`); each review goes through `review_one`,
    so a participant is never reviewed twice. Dry-run mode records nothing.
    """
    actions = []
    for pid, reason, category in plan:
        action = review_one(
            study=study,
            client=client,
            pid=pid,
            kind=kind,
            user=user,
            reason=reason,
            category=category,
        )
        if action is not None:
            actions.append(action)
    return actions


def review_one(
    *,
    study: Study,
    client: ProlificClient,
    pid: str,
    kind: str,
    user=None,
    reason: str = "",
    category: str = "OTHER",
) -> ProlificAction | None:
    """Send one participant's approval or rejection once; return its recorded action.

    Keyed per participant: a succeeded review is never sent again (whatever is asked next),
    a failed one is sent again with this request's kind and reason. When Prolific refuses
    because the submission already has the asked status (an earlier answer was lost), the
    submission is read back and the action recorded as succeeded. None in dry-run mode.
    """
    submission_id = _submission_id(study, pid)
    if client.dry_run:
        _send_review(client, kind, submission_id or f"<submission of {pid}>", reason, category)
        return None
    if not submission_id:
        raise ProlificActionRefused(f"Prolific has no submission of {pid} (sync first).")
    action, _ = ProlificAction.objects.get_or_create(
        key=f"{study.pk}:review:{pid}",
        defaults={
            "study": study,
            "kind": kind,
            "prolific_pid": pid,
            "submission_id": submission_id,
            "reason": reason,
            "created_by": user,
        },
    )
    target = "APPROVED" if kind == ProlificAction.Kind.APPROVE else "REJECTED"
    with transaction.atomic():
        claimed = _claim(action)
        if claimed is None:
            return action
        ProlificAction.objects.filter(pk=claimed.pk).update(reason=reason)
        try:
            answer = _send_review(client, kind, submission_id, reason, category)
        except ProlificError as error:
            remote = _already(client, submission_id, error)
            if remote != target:
                _record(claimed, ProlificAction.Status.FAILED, {"error": str(error)}, kind=kind)
                return claimed
            answer = {"status": target, "note": "Prolific already had this status."}
        if kind == ProlificAction.Kind.REJECT:
            answer = {**answer, "sent_category": category}
        _record(claimed, ProlificAction.Status.SUCCEEDED, answer, kind=kind)
        ProlificSubmission.objects.filter(submission_id=submission_id).update(
            status=target, status_at=timezone.now()
        )
    return claimed


def _already(client: ProlificClient, submission_id: str, error: ProlificError) -> str:
    """Return the submission's status on Prolific after a 400/409 refusal ("" otherwise)."""
    if error.status not in (400, 409):
        return ""
    try:
        remote = client.submission_get(submission_id)
    except ProlificError:
        return ""
    return remote.status if remote else ""


def _send_review(client, kind, submission_id, reason, category) -> dict:
    if kind == ProlificAction.Kind.APPROVE:
        return client.submission_approve(submission_id)
    return client.submission_reject(submission_id, message=reason, category=category)


def _record(action: ProlificAction, status: str, response, *, kind: str | None = None) -> None:
    fields = {"status": status, "response": response if isinstance(response, dict) else {}}
    if kind:
        fields["kind"] = kind
    ProlificAction.objects.filter(pk=action.pk).update(**fields, updated_at=timezone.now())
    action.refresh_from_db()


def bonus_label_key(label: str) -> str:
    """Return the label as bonuses are keyed: "Race", "race " and "RACE" are one bonus."""
    return " ".join(label.split()).casefold()


def _bonus_action(
    study: Study,
    pid: str,
    amount: Decimal,
    label: str,
    user,
    judgment_ids: list[int],
    override: str,
) -> ProlificAction:
    """Return the participant's action for bonus `label` (case-insensitive), made once."""
    earlier = ProlificAction.objects.filter(
        study=study, kind=ProlificAction.Kind.BONUS, prolific_pid=pid, reason__iexact=label
    ).first()  # keyed case-sensitively before issue 37
    if earlier is not None:
        return earlier
    action, _ = ProlificAction.objects.get_or_create(
        key=f"{study.pk}:bonus:{bonus_label_key(label)}:{pid}",
        defaults={
            "study": study,
            "kind": ProlificAction.Kind.BONUS,
            "prolific_pid": pid,
            "amount": amount,
            "reason": label,
            "judgment_ids": judgment_ids,
            "override": override,
            "created_by": user,
        },
    )
    return action


def bonuses_pay(
    *,
    study: Study,
    client: ProlificClient,
    amounts: dict[str, Decimal],
    label: str,
    user=None,
    judgments: dict[str, list[int]] | None = None,
    overrides: dict[str, str] | None = None,
) -> list[ProlificAction]:
    """Pay each participant their bonus `label` once, however often this is retried.

    Who and how much is `intruder.prolific.bonuses.bonus_select`'s to say; `judgments` (the
    judgments each amount pays for) are recorded so no later label pays them again, and
    `overrides` the researcher's reason for anyone paid outside the default rule.

    Two steps, each committed before the next: rows never set up are set up in one Prolific
    bonus and its id is stored with them; then each stored bonus is paid. A process that
    dies during the pay call leaves the id stored, so the retry pays that same bonus (Prolific
    pays a bonus once and says so) instead of setting up another. A participant whose bonus
    `label` (compared case-insensitively) succeeded is skipped.
    """
    if not study.prolific_study_id:
        raise ProlificActionRefused("This study has no Prolific study ID.")
    if any(amount <= 0 for amount in amounts.values()):
        raise ProlificActionRefused("Bonus amounts must be positive.")
    label = " ".join(label.split())
    if not label:
        raise ProlificActionRefused("A bonus needs a label.")
    if client.dry_run:
        rows = [(pid, float(a)) for pid, a in amounts.items()]
        setup = client.bonus_setup(study.prolific_study_id, rows)
        client.bonus_pay(setup.get("id", "<bonus id>"))
        return []
    judgments, overrides = judgments or {}, overrides or {}
    actions = [
        _bonus_action(
            study, pid, amount, label, user, judgments.get(pid, []), overrides.get(pid, "")
        )
        for pid, amount in amounts.items()
    ]
    with transaction.atomic():  # set up, and store the bonus id, before any pay call
        claimed = [a for a in actions if _claim(a) is not None]
        fresh = [a for a in claimed if not a.prolific_ref]
        if fresh:
            _set_up(client, study, fresh)
    refs = (
        ProlificAction.objects.filter(pk__in=[a.pk for a in claimed])
        .exclude(status=ProlificAction.Status.SUCCEEDED)
        .exclude(prolific_ref="")
        .values_list("prolific_ref", flat=True)
    )
    for ref in sorted(set(refs)):
        _pay(client, ref)
    for a in actions:
        a.refresh_from_db()
    return actions


def _set_up(client: ProlificClient, study: Study, fresh: list[ProlificAction]) -> None:
    """Set up one Prolific bonus for `fresh` and store its id with them (or the failure)."""
    try:
        setup = client.bonus_setup(
            study.prolific_study_id, [(a.prolific_pid, float(a.amount)) for a in fresh]
        )
    except ProlificError as error:
        for a in fresh:
            _record(a, ProlificAction.Status.FAILED, {"error": str(error)})
        return
    ProlificAction.objects.filter(pk__in=[a.pk for a in fresh]).update(
        prolific_ref=setup["id"], status=ProlificAction.Status.SET_UP, response=setup
    )


def _pay(client: ProlificClient, ref: str) -> None:
    pending = ProlificAction.objects.filter(prolific_ref=ref).exclude(
        status=ProlificAction.Status.SUCCEEDED
    )
    try:
        answer = client.bonus_pay(ref)
    except ProlificError as error:
        if "already" in str(error).lower():  # paid by an earlier try whose answer was lost
            pending.update(status=ProlificAction.Status.SUCCEEDED, updated_at=timezone.now())
            return
        pending.update(status=ProlificAction.Status.FAILED, response={"error": str(error)})
        return
    pending.update(
        status=ProlificAction.Status.SUCCEEDED,
        response=answer if isinstance(answer, dict) else {"paid": True},
        updated_at=timezone.now(),
    )


def prolific_monitor_state(study: Study) -> ProlificStudyState | None:
    """Return the study's Prolific state with counts of the submissions known here."""
    state = ProlificStudyState.objects.filter(study=study).first()
    if state is None:
        return None
    known = count_by(ProlificSubmission.objects.filter(study=study), "status")
    state.counts = known or state.counts
    return state

"""Prolific enrolment and the participant's progress through consent, instructions and debrief.

Every state change is a conditional UPDATE (`filter(<expected state>).update(...)`), so a
double submit or two open tabs change the state once and the second request is a no-op.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from intruder.enrolment import (
    EnrolmentRefused,
    new_enrolment_check,
    prolific_id_clean,
    prolific_pid_check,
)
from intruder.evidence.attention import attention_check_due
from intruder.evidence.models import AttentionCheck
from intruder.models import Assignment, Participant, Study, WritingTask
from intruder.selectors.linked import (
    linked_crowd_open,
    participant_in_linked_study,
    pid_in_linked_crowd,
    studies_linked_open,
)
from intruder.selectors.participant import (
    GroupCapacity,
    Step,
    assignment_completed_count,
    intruder_capacity_query,
    intruder_group_capacities,
    intruder_group_slots,
    intruder_progress,
    participant_get_by_pid,
    participant_needs_group,
    participant_step,
    study_groups,
    writer_target_pool,
    writing_task_next,
)
from intruder.services.assignment import (
    assignment_mark_shown,
    assignment_next,
    study_reclaim_slots,
)
from intruder.services.writing import writing_tasks_assign


@dataclass(frozen=True)
class CurrentStep:
    """The page a participant is on, with the writing task or assignment it shows."""

    step: str
    task: WritingTask | None = None
    assignment: Assignment | None = None
    completed: int = 0  # intruders: texts judged so far
    check: AttentionCheck | None = None


@dataclass(frozen=True)
class Enrolment:
    """The participant an entry URL leads to, and whether this request created them."""

    participant: Participant
    created: bool


def least_claimed_group(capacities: list[GroupCapacity]) -> str:
    """Return the group whose slots are least spoken for ("" when none has an unclaimed slot).

    Spoken for: judged, or owed to the group's started participants. A group whose every
    slot is spoken for is not offered: one more participant there would consent and then
    find nothing to judge (a burst of 12 on room for 4 left 4 with nothing to do). Counting what
    participants are owed, not the assignments that exist, matters because assignments are
    created one page at a time: a crowd arriving at once has no assignments yet and would
    otherwise all land in one group. Ties go to the earlier group (famous, semifamous,
    fictitious).
    """
    open_groups = [c for c in capacities if c.free_slots > 0 and c.unclaimed > 0]
    if not open_groups:
        return ""
    return max(open_groups, key=lambda capacity: capacity.unclaimed).group


def study_lock(*, study: Study) -> None:
    """Lock the study's row until the current transaction ends (serialises enrolments).

    An UPDATE that changes nothing takes the row lock on PostgreSQL and the database's write
    lock on SQLite before anything is read, so each enrolment counts the groups with every
    earlier enrolment committed, and SQLite never has to upgrade a read lock (which fails).
    """
    Study.objects.filter(pk=study.pk).update(is_open=F("is_open"))


def _refuse_new_participant(*, study: Study) -> dict[str, int]:
    """Raise EnrolmentRefused when a new participant cannot start the study.

    Returns an intruder study's judgment slots per group (empty for a writer study), which
    the group claim reuses. Whether an intruder study is full is decided later, under the
    study lock, when the participant is created with the group that claims their items
    (`_intruder_claim_group`).
    """
    if not study.is_open:
        raise EnrolmentRefused(EnrolmentRefused.CLOSED)
    if study.kind == Study.Kind.COLLECTION:
        groups = study_groups(study=study)
        if not any(writer_target_pool(study=study, group=g).exists() for g in groups):
            raise EnrolmentRefused(EnrolmentRefused.NOT_READY)
        return {}
    if not settings.INTRUDER_DEMO and studies_linked_open(study=study).exists():
        # A writer study over the same targets is open: its writers learn the answers.
        raise EnrolmentRefused(EnrolmentRefused.CLOSED)
    if linked_crowd_open(study=study):
        # A crowd annotation project shows the originals of these targets (demo included).
        raise EnrolmentRefused(EnrolmentRefused.CLOSED)
    slots = intruder_group_slots(study=study)
    if not any(slots.values()):
        raise EnrolmentRefused(EnrolmentRefused.NOT_READY)
    return slots


def participant_enroll(
    *,
    study: Study,
    prolific_pid: str,
    prolific_study_id: str = "",
    prolific_session_id: str = "",
    admit_new: Callable[[], bool] | None = None,
    admit_known: Callable[[], bool] | None = None,
) -> Enrolment:
    """Enrol a Prolific participant, or return the existing enrolment for a known PID.

    A known PID always gets its own participant back (resume, or the page for a completed or
    returned participant). A new PID is refused when the link's STUDY_ID is not the study's
    Prolific ID (if the study has one), when it took part in a linked study (a writer who has
    seen the targets must not judge them, nor the other way round), when `admit_new` (the
    caller's rate limit per client) or `admit_known` (Prolific knows of this submission) says
    no, and when the study is closed, empty or full.

    An intruder is created with their group, under the study lock, which claims their items
    at once: a burst of enrolments never admits more people than there are slots, and a
    refusal comes before consent, not after. A claim held by someone who does nothing is
    given back after the idle window when another participant needs it.
    """
    pid = prolific_pid_check(prolific_pid)
    existing = participant_get_by_pid(study=study, prolific_pid=pid)
    if existing is not None:
        return Enrolment(participant=existing, created=False)
    new_enrolment_check(
        expected_study_id=study.prolific_study_id,
        given_study_id=prolific_study_id,
        linked=lambda: (
            participant_in_linked_study(study=study, prolific_pid=pid)
            or pid_in_linked_crowd(study=study, prolific_pid=pid)
        ),
        admit_new=admit_new,
    )
    slots = _refuse_new_participant(study=study)
    if admit_known is not None and not admit_known():
        raise EnrolmentRefused(EnrolmentRefused.UNKNOWN_TO_PROLIFIC)
    try:
        with transaction.atomic():
            participant = Participant(
                study=study,
                prolific_pid=pid,
                prolific_study_id=prolific_id_clean(prolific_study_id),
                prolific_session_id=prolific_id_clean(prolific_session_id),
            )
            # The study is given and the token fresh: skip the queries that would check them.
            participant.full_clean(exclude=["study", "token"], validate_constraints=False)
            if study.kind == Study.Kind.INTRUDER:
                _intruder_claim_group(participant=participant, slots=slots)
            participant.save()
    except IntegrityError:
        # The same PID enrolled in a concurrent request (double click on the Prolific link).
        existing = participant_get_by_pid(study=study, prolific_pid=pid)
        if existing is None:
            raise
        return Enrolment(participant=existing, created=False)
    return Enrolment(participant=participant, created=True)


# A participant's study never changes, so a reload keeps the study already loaded with it
# (`refresh_from_db()` without fields would drop it, and the next page would read it again).
PARTICIPANT_STATE_FIELDS = tuple(
    field.attname for field in Participant._meta.concrete_fields if field.attname != "study_id"
)


def participant_reload(participant: Participant) -> None:
    """Re-read the participant's own row (status, group, times), keeping its loaded study."""
    participant.refresh_from_db(fields=PARTICIPANT_STATE_FIELDS)


def _intruder_claim_group(
    *, participant: Participant, slots: dict[str, int], now: datetime | None = None
) -> None:
    """Set a new intruder's group under the study lock, or refuse them as FULL.

    Must run inside a transaction, which the participant's insert then joins: the lock is
    held until the claim is committed, so concurrent enrolments each count the ones before.
    `slots` (the groups' judgment slots, read by the refusal checks before the lock: only a
    researcher's release or withdrawal changes them) keeps that query out of the lock, and the
    counts' SQL is compiled before it: under the lock run only the counts, the insert and the
    commit.
    """
    study = participant.study
    counts = intruder_capacity_query(study=study)
    study_lock(study=study)
    group = least_claimed_group(intruder_group_capacities(study=study, slots=slots, query=counts))
    if not group:
        study_reclaim_slots(study=study, now=now)
        group = least_claimed_group(
            intruder_group_capacities(study=study, slots=slots, query=counts)
        )
    if not group:
        raise EnrolmentRefused(EnrolmentRefused.FULL)
    participant.group = group


def intruder_group_assign(*, participant: Participant, now: datetime | None = None) -> str:
    """Give a consented intruder without a group the least spoken-for group; return it.

    Intruders get their group at enrolment; this serves those enrolled before that rule.

    Runs under the study lock, so concurrent consents each count the ones before. Returns ""
    (and assigns nothing) when no group has a free slot even after reclaiming what may be
    reclaimed: the participant then sees the "full" page and is offered a group again on
    their next visit.
    """
    study = participant.study
    slots = intruder_group_slots(study=study)
    counts = intruder_capacity_query(study=study)
    with transaction.atomic():
        study_lock(study=study)
        group = least_claimed_group(
            intruder_group_capacities(study=study, slots=slots, query=counts)
        )
        if not group:
            study_reclaim_slots(study=study, now=now)
            group = least_claimed_group(
                intruder_group_capacities(study=study, slots=slots, query=counts)
            )
        if group:
            Participant.objects.filter(
                pk=participant.pk, status=Participant.Status.STARTED, group=""
            ).update(group=group)
    participant_reload(participant)
    return participant.group


def writer_consent_closed(*, participant: Participant) -> bool:
    """Return whether a writer who has not consented yet may no longer (targets not shown).

    Consent is what shows a writer their target persons: after the writer study closes, an
    enrolment from while it was open must not reveal them (the intruder study may be open).
    """
    study = participant.study
    return (
        study.kind == Study.Kind.COLLECTION
        and participant.consented_at is None
        and participant.status == Participant.Status.STARTED
        and not study.is_open
    )


def participant_consent_give(
    *, participant: Participant, rng: random.Random | None = None, now: datetime | None = None
) -> None:
    """Record consent; writers get their three targets drawn now (once, even if posted twice).

    Raises EnrolmentRefused(CLOSED) for a writer whose study has closed since enrolment.
    """
    now = now or timezone.now()
    if participant.study.kind == Study.Kind.COLLECTION:
        # Only a writer's consent depends on the study being open (writer_consent_closed).
        participant.study.refresh_from_db(fields=["is_open"])
    if writer_consent_closed(participant=participant):
        raise EnrolmentRefused(EnrolmentRefused.CLOSED)
    with transaction.atomic():
        changed = Participant.objects.filter(
            pk=participant.pk, status=Participant.Status.STARTED, consented_at__isnull=True
        ).update(consented_at=now, last_seen_at=now)
        if changed and participant.study.kind == Study.Kind.COLLECTION:
            writing_tasks_assign(participant=participant, rng=rng)
    participant_reload(participant)
    if changed and participant_needs_group(participant=participant):
        intruder_group_assign(participant=participant, now=now)


def participant_consent_decline(*, participant: Participant, now: datetime | None = None) -> None:
    """Mark a participant who declines consent as returned (they get no completion code)."""
    now = now or timezone.now()
    Participant.objects.filter(
        pk=participant.pk, status=Participant.Status.STARTED, consented_at__isnull=True
    ).update(status=Participant.Status.RETURNED, last_seen_at=now)
    participant_reload(participant)


def participant_instructions_confirm(
    *, participant: Participant, now: datetime | None = None
) -> None:
    """Record that an intruder has read the instructions."""
    now = now or timezone.now()
    confirmed = Participant.objects.filter(
        pk=participant.pk,
        status=Participant.Status.STARTED,
        consented_at__isnull=False,
        instructions_seen_at__isnull=True,
    ).update(instructions_seen_at=now, last_seen_at=now)
    if confirmed:  # the row is what the update wrote: no need to read it back
        participant.instructions_seen_at = participant.last_seen_at = now
    else:
        participant_reload(participant)


def participant_current_step(
    *, participant: Participant, rng: random.Random | None = None, now: datetime | None = None
) -> CurrentStep:
    """Return the participant's current page, claiming their next text if they need one.

    Everything is derived from stored state, so a reload (or a second tab) shows the same page
    and the same text; the first time a text is shown is recorded for the time spent.
    """
    progress = None
    if participant_needs_group(participant=participant):
        intruder_group_assign(participant=participant, now=now)
    if (
        participant.study.kind == Study.Kind.INTRUDER
        and participant.status == Participant.Status.STARTED
        and participant.instructions_seen_at is not None
    ):
        progress = intruder_progress(participant=participant)
    step = participant_step(participant=participant, progress=progress)
    if step == Step.WRITE:
        return CurrentStep(step=step, task=writing_task_next(participant=participant))
    if step == Step.DEBRIEF and participant.study.kind == Study.Kind.COLLECTION:
        if not participant.writing_tasks.exists():
            return CurrentStep(step=Step.NOTHING_LEFT)
        return CurrentStep(step=step)
    if step != Step.JUDGE:
        return CurrentStep(step=step, completed=progress.completed if progress else 0)
    if progress.active is None:
        # Between two texts: a due attention check comes first (it is not a text).
        check = attention_check_due(participant=participant, completed=progress.completed, now=now)
        if check is not None:
            return CurrentStep(step=Step.CHECK, check=check, completed=progress.completed)
    assignment = assignment_next(participant=participant, rng=rng, now=now, progress=progress)
    if assignment is not None:
        assignment_mark_shown(assignment=assignment, now=now)
        # Positions count up from 1 and the text in progress comes after every judged one.
        return CurrentStep(step=step, assignment=assignment, completed=assignment.position - 1)
    participant_reload(participant)
    if participant.status != Participant.Status.STARTED:
        return CurrentStep(step=participant_step(participant=participant))
    completed = assignment_completed_count(participant=participant)
    if completed == 0:
        return CurrentStep(step=Step.NOTHING_LEFT)
    # The pool ran out before N texts: finish with fewer.
    return CurrentStep(step=Step.DEBRIEF, completed=completed)


def participant_complete(*, participant: Participant, now: datetime | None = None) -> bool:
    """Mark a participant who has reached the debrief as completed; return whether they are.

    Returns False (and changes nothing) while work is still open, so a stale "finish" post
    cannot skip items.
    """
    now = now or timezone.now()
    participant_reload(participant)
    if participant.status == Participant.Status.COMPLETED:
        return True
    if participant_current_step(participant=participant, now=now).step != Step.DEBRIEF:
        return False
    return participant_code_reached(participant=participant, now=now)


def participant_code_reached(*, participant: Participant, now: datetime | None = None) -> bool:
    """Mark a participant on the debrief, which shows the completion code, as completed.

    Prolific pays whoever enters the code, so seeing it is completing, whether or not they
    press "Finish" afterwards. The caller has derived the debrief step; one conditional
    UPDATE, so a returned or timed-out participant stays as they are. Returns whether the
    participant is completed.
    """
    now = now or timezone.now()
    marked = Participant.objects.filter(
        pk=participant.pk, status=Participant.Status.STARTED
    ).update(status=Participant.Status.COMPLETED, completed_at=now, last_seen_at=now)
    if marked:
        participant.status = Participant.Status.COMPLETED
        participant.completed_at = participant.last_seen_at = now
    else:
        participant_reload(participant)
    return participant.status == Participant.Status.COMPLETED

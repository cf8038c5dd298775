"""Balanced assignment of anonymized texts to intruders.

Policy:
- Lazy, one text at a time: a participant gets their next text when they reach it, chosen
  among the texts with the fewest held slots (completed judgments plus assignments still in
  progress) at that moment. Deciding lazily keeps the balance current (slots freed by
  abandoned participants are reused at once) and an abandoned participant holds at most one
  slot instead of N.
- Each text has `study.judgments_per_text` slots; an active or completed assignment holds one.
  The database's partial unique constraint on (text, slot) makes over-assignment impossible:
  two participants racing for the last slot both try to insert it, one insert fails, and the
  loser re-reads the pool and tries again (a lone INSERT in autocommit, or a savepoint inside
  a caller's transaction, so the failure is harmless).
- Nobody sees the same text twice (unique (participant, text)), nor two anonymizations of the
  same description, nor (unless `study.allow_same_target`) two texts about the same person:
  judgments of one person by one intruder are not independent, and the second is not a fresh
  intruder's view. The database holds this too: the assignment stores its text's target in
  `exclusive_target`, unique per participant.
- An assignment still active `study.time_limit_minutes` after it was handed out is released
  (its slot is free again) and its participant marked timed out; their finished judgments stay.
  The worker's periodic sweep (`run_worker`, or `manage.py release_expired` from cron) does
  this for every study; a request does it only for its own participant, and for the study
  when no free slot seems left, so that no page view has to scan the study.
- When the pool runs out a participant gets fewer than N texts and goes on to the debrief.
- Catch trials (texts about made-up persons, `intruder.evidence.catch_trials`) hold no
  slots: each intruder is shown `study.catch_trials_per_participant` of them among their N,
  the least shown first, at positions drawn once per participant (`catch_positions`); where
  none is left for them, a text takes the position. They are never counted in the rates.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, FilteredRelation, OuterRef, Q
from django.utils import timezone

from intruder.evidence.canary import new_canary_word
from intruder.exceptions import IntruderError
from intruder.models import AnonymizedText, Assignment, Participant, Study
from intruder.selectors.participant import (
    HELD_STATUSES,
    IntruderProgress,
    intruder_progress,
    intruder_text_pool,
)

logger = logging.getLogger(__name__)

# Each failed insert means another participant took that slot meanwhile; the next attempt
# re-reads the pool. Even 100 participants starting at once settle well within this bound.
ASSIGN_ATTEMPTS = 30


class AssignmentBusy(IntruderError):
    """No free slot could be claimed after ASSIGN_ATTEMPTS tries (extreme contention)."""

    status_code = 503  # try again: the slots are contended, not gone


@dataclass(frozen=True)
class ExpirySweep:
    """What one sweep over expired work changed."""

    released: int
    timed_out: int


def _assignment_release(*, assignment_id: int, participant_id: int, now: datetime) -> ExpirySweep:
    """Release one active assignment and time its participant out (no-op if completed)."""
    with transaction.atomic():
        released = Assignment.objects.filter(
            pk=assignment_id, status=Assignment.Status.ACTIVE
        ).update(status=Assignment.Status.RELEASED)
        timed_out = 0
        if released:
            timed_out = Participant.objects.filter(
                pk=participant_id, status=Participant.Status.STARTED
            ).update(status=Participant.Status.TIMED_OUT, last_seen_at=now)
    return ExpirySweep(released=released, timed_out=timed_out)


def _assignments_release(rows: list[tuple[int, int]], *, now: datetime) -> ExpirySweep:
    """Release each (assignment id, participant id) one by one; return the totals."""
    released = timed_out = 0
    for assignment_id, participant_id in rows:
        one = _assignment_release(
            assignment_id=assignment_id, participant_id=participant_id, now=now
        )
        released += one.released
        timed_out += one.timed_out
    return ExpirySweep(released=released, timed_out=timed_out)


def assignment_expired(*, assignment: Assignment, study: Study, now: datetime) -> bool:
    """Return whether an active assignment has outlived the study's time limit."""
    return assignment.assigned_at < now - timedelta(minutes=study.time_limit_minutes)


def assignments_release_expired(*, study: Study, now: datetime | None = None) -> ExpirySweep:
    """Release the study's assignments left active past the time limit.

    Their participants are marked timed out. Also released: active assignments of anyone who
    is no longer started (e.g. timed out while claiming a text). Each release is a conditional
    update, so an assignment completed a moment earlier is never released, nor its
    participant timed out.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=study.time_limit_minutes)
    expired = list(
        Assignment.objects.filter(participant__study=study, status=Assignment.Status.ACTIVE)
        .filter(Q(assigned_at__lt=cutoff) | ~Q(participant__status=Participant.Status.STARTED))
        .values_list("pk", "participant_id")
    )
    return _assignments_release(expired, now=now)


def participants_time_out_idle(*, study: Study, now: datetime | None = None) -> int:
    """Mark intruders who never got a text and were last seen past the time limit timed out.

    They hold no slot, but each started participant is owed items that the group choice
    reserves for them; someone who left on the consent or instructions page would reserve
    them for ever. Participants with any assignment are left alone: an expired active one is
    released above, and one who has judged texts is at the debrief and keeps their code.
    """
    if study.kind != Study.Kind.INTRUDER:
        return 0
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=study.time_limit_minutes)
    return (
        Participant.objects.filter(
            study=study, status=Participant.Status.STARTED, last_seen_at__lt=cutoff
        )
        .exclude(Exists(Assignment.objects.filter(participant=OuterRef("pk"))))
        .update(status=Participant.Status.TIMED_OUT)
    )


def study_release_expired(*, study: Study, now: datetime | None = None) -> ExpirySweep:
    """Release the study's expired assignments and time out its idle intruders."""
    now = now or timezone.now()
    expired = assignments_release_expired(study=study, now=now)
    idle = participants_time_out_idle(study=study, now=now)
    return ExpirySweep(released=expired.released, timed_out=expired.timed_out + idle)


def assignments_release_idle(*, study: Study, now: datetime | None = None) -> ExpirySweep:
    """Give back what idle participants hold when someone else needs a slot.

    Released: every active assignment held past `INTRUDER_IDLE_RELEASE_MINUTES` (at most the
    study's time limit), whatever its position (a made-up PID that answers one text must not
    keep the next for the whole time limit), its holder timed out with their finished
    judgments kept. Timed out too: enrolled intruders who have judged nothing, hold no text
    and were last seen past the idle window (their group claim is all they hold). Called
    only when someone needs a slot (`study_reclaim_slots`), so nobody is cut short while
    slots are free.
    """
    now = now or timezone.now()
    minutes = min(settings.INTRUDER_IDLE_RELEASE_MINUTES, study.time_limit_minutes)
    cutoff = now - timedelta(minutes=minutes)
    idle = list(
        Assignment.objects.filter(
            participant__study=study, status=Assignment.Status.ACTIVE, assigned_at__lt=cutoff
        ).values_list("pk", "participant_id")
    )
    released = _assignments_release(idle, now=now)
    claims = (
        Participant.objects.filter(
            study=study, status=Participant.Status.STARTED, last_seen_at__lt=cutoff
        )
        .exclude(group="")
        .exclude(Exists(Assignment.objects.filter(participant=OuterRef("pk"))))
        .update(status=Participant.Status.TIMED_OUT)
    )
    return ExpirySweep(released=released.released, timed_out=released.timed_out + claims)


def study_reclaim_slots(*, study: Study, now: datetime | None = None) -> ExpirySweep:
    """Free what may be freed when someone needs a slot: expired work, then idle holders.

    Returns what was freed; `timed_out` counts participants whose claims went back too.
    """
    now = now or timezone.now()
    expired = assignments_release_expired(study=study, now=now)
    idle = assignments_release_idle(study=study, now=now)
    return ExpirySweep(
        released=expired.released + idle.released, timed_out=expired.timed_out + idle.timed_out
    )


def assignments_release_withdrawn(*, text_id: int) -> int:
    """Release the active assignments of a text withdrawn from intruders; return how many.

    Their holders are not timed out: their next page claims another text. Completed
    judgments of the text stay (the researcher decides what to do with them).
    """
    return Assignment.objects.filter(text_id=text_id, status=Assignment.Status.ACTIVE).update(
        status=Assignment.Status.RELEASED
    )


def studies_release_expired(*, now: datetime | None = None) -> ExpirySweep:
    """Sweep every intruder study with started participants or active assignments.

    The worker's periodic job, and `manage.py release_expired`. A study whose sweep fails is
    logged and skipped: one bad study never stops the sweep of the others.
    """
    now = now or timezone.now()
    released = timed_out = 0
    studies = Study.objects.filter(
        Q(participants__status=Participant.Status.STARTED)
        | Q(participants__assignments__status=Assignment.Status.ACTIVE),
        kind=Study.Kind.INTRUDER,
    ).distinct()
    for study in studies:
        try:
            sweep = study_release_expired(study=study, now=now)
        except Exception:
            logger.exception("expiry sweep of study %s (%s) failed", study.pk, study.slug)
            continue
        released += sweep.released
        timed_out += sweep.timed_out
    return ExpirySweep(released=released, timed_out=timed_out)


def catch_positions(*, participant: Participant) -> frozenset[int]:
    """Return the positions (1-based) at which the participant is shown a catch trial.

    Drawn from the participant's id, so every request of theirs agrees; never every position
    (an intruder judges at least one real text). Reads nothing: a study with fewer catch
    trials fills the other positions with texts (`assignment_candidates`).
    """
    study = participant.study
    count = min(study.catch_trials_per_participant, study.items_per_participant - 1)
    if count <= 0:
        return frozenset()
    places = range(1, study.items_per_participant + 1)
    return frozenset(random.Random(f"catch {participant.pk}").sample(places, count))


def assignment_candidates(
    *, participant: Participant, rng: random.Random, catch: bool = False
) -> list[tuple[int, set[int], int | None]]:
    """Return (text id, taken slots, exclusive target id) of texts the participant may get.

    Fewest held first. Ties are broken at random so that concurrent participants spread over
    equally needed texts instead of all racing for the same one. The target id is what the
    claim stores in `exclusive_target` (None where the study allows several texts about
    one person). `catch`: a catch trial if one is left for the participant (their slots are
    never full), else the texts; one query either way.
    """
    study = participant.study
    pool = intruder_text_pool(study=study, group=participant.group)
    if catch:
        pool = pool | intruder_text_pool(study=study, catch=True)
    # Each exclusion is one NOT IN over the participant's own few assignments, which
    # PostgreSQL hashes once per query (a NOT EXISTS probed the assignments once per text).
    if study.allow_same_target:
        seen = participant.assignments.values_list("text__description_id", flat=True)
        pool = pool.exclude(description_id__in=seen)
    else:
        # A seen description's target is a seen target: this excludes both.
        seen = participant.assignments.values_list("text__description__target_id", flat=True)
        pool = pool.exclude(description__target_id__in=seen)
    # One query: each text with the slots held on it (a text with none comes once, slot None).
    # Joined here rather than asked as `text_id IN (...)`: that list changes length with
    # every page, so PostgreSQL would plan it afresh each time.
    held = FilteredRelation("assignments", condition=Q(assignments__status__in=HELD_STATUSES))
    targets: dict[int, int] = {}
    catches: set[int] = set()
    taken: dict[int, set[int]] = defaultdict(set)
    for text_id, target_id, is_catch, slot in pool.annotate(held=held).values_list(
        "id", "description__target_id", "description__target__catch", "held__slot"
    ):
        targets[text_id] = target_id
        if is_catch:
            catches.add(text_id)
        if slot is not None:
            taken[text_id].add(slot)
    if catches:  # a catch trial's position, and one is left for the participant
        open_texts = [(text_id, taken[text_id]) for text_id in catches]
    else:
        open_texts = [
            (text_id, taken[text_id])
            for text_id in targets
            if len(taken[text_id]) < study.judgments_per_text
        ]
    keyed = [(len(slots), rng.random(), text_id, slots) for text_id, slots in open_texts]
    keyed.sort(key=lambda row: row[:3])
    exclusive = not study.allow_same_target
    return [
        (text_id, slots, targets[text_id] if exclusive else None) for _, _, text_id, slots in keyed
    ]


def free_slot(*, taken: set[int], judgments_per_text: int) -> int:
    """Return the lowest slot number (1-based) not in `taken`.

    Looks at len(taken) + 1 numbers at most, never at all `judgments_per_text` of them.
    """
    return next(slot for slot in range(1, judgments_per_text + 1) if slot not in taken)


def _savepoint_if_in_transaction() -> AbstractContextManager:
    """Return a savepoint inside a caller's transaction, else nothing.

    The claim is one INSERT. In autocommit (a participant's page) a failed insert leaves
    nothing to undo, so BEGIN and COMMIT would be two round trips for nothing; inside a
    transaction the savepoint keeps that transaction usable after the IntegrityError.
    """
    return transaction.atomic() if transaction.get_connection().in_atomic_block else nullcontext()


def assignment_next(
    *,
    participant: Participant,
    rng: random.Random | None = None,
    now: datetime | None = None,
    progress: IntruderProgress | None = None,
) -> Assignment | None:
    """Return the participant's current assignment (text loaded), claiming the next if needed.

    Returns None when the participant has judged N texts, has stopped (completed, returned,
    timed out) or no text with a free slot is left for them. `participant` must be fresh
    from this request; `progress` saves reading it again when the caller has it.

    Expired assignments are released here only where it matters to this participant: their
    own (they are timed out), and the study's when no free slot seems left. The worker's
    periodic sweep releases the rest, so a page view does not scan the study.
    """
    rng = rng or random.SystemRandom()
    now = now or timezone.now()
    study = participant.study
    if participant.status != Participant.Status.STARTED:
        return None
    progress = progress or intruder_progress(participant=participant)
    active = progress.active
    if active is not None and active.text.status != AnonymizedText.Status.RELEASED:
        # Withdrawn after it was handed out (withdrawal releases it; this covers a claim
        # that raced the withdrawal): give it back and claim the next text.
        assignments_release_withdrawn(text_id=active.text_id)
        progress = intruder_progress(participant=participant)
        active = progress.active
    if active is not None:
        if not assignment_expired(assignment=active, study=study, now=now):
            return active
        # Timed out (or completed a moment ago in another tab): the caller re-reads the step.
        _assignment_release(assignment_id=active.pk, participant_id=participant.pk, now=now)
        return None
    completed = progress.completed
    if completed >= study.items_per_participant:
        return None
    swept = False
    catch = completed + 1 in catch_positions(participant=participant)
    for _attempt in range(ASSIGN_ATTEMPTS):
        candidates = assignment_candidates(participant=participant, rng=rng, catch=catch)
        if not candidates and not swept:
            swept = True
            reclaimed = study_reclaim_slots(study=study, now=now)
            if reclaimed.released or reclaimed.timed_out:
                candidates = assignment_candidates(participant=participant, rng=rng, catch=catch)
        if not candidates:
            return None
        text_id, taken, target_id = candidates[0]
        # A catch trial's slots are never full: one more than it holds.
        slot = free_slot(
            taken=taken, judgments_per_text=max(study.judgments_per_text, len(taken) + 1)
        )
        try:
            with _savepoint_if_in_transaction():
                # Shown as soon as it is claimed: the claim happens when the page is built.
                return Assignment.objects.create(
                    participant=participant,
                    text_id=text_id,
                    position=completed + 1,
                    slot=slot,
                    exclusive_target_id=target_id,
                    canary=new_canary_word(),
                    shown_at=now,
                )
        except IntegrityError:
            # Someone else took this slot, or this participant's other tab claimed a text.
            progress = intruder_progress(participant=participant)
            if progress.active is not None:
                return progress.active
            completed = progress.completed
            if completed >= study.items_per_participant:
                return None
    raise AssignmentBusy(f"no free slot claimed after {ASSIGN_ATTEMPTS} attempts")


def assignment_mark_shown(*, assignment: Assignment, now: datetime | None = None) -> None:
    """Record when the text was first shown (reloads keep the first time)."""
    if assignment.shown_at is not None:
        return
    now = now or timezone.now()
    Assignment.objects.filter(pk=assignment.pk, shown_at__isnull=True).update(shown_at=now)
    assignment.refresh_from_db(fields=["shown_at"])

"""Reads for the participant flows: which step a participant is on, and what they may see.

Nothing returned here for an intruder carries an original text, a target's name or another
participant's data: texts are AnonymizedText rows read through `intruder_text_view`.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connections
from django.db.models import CharField, Count, Q, QuerySet, Value

from intruder.models import (
    AnonymizedText,
    Assignment,
    Participant,
    PersonGroup,
    Study,
    TargetPerson,
    WritingTask,
)

HELD_STATUSES = (Assignment.Status.ACTIVE, Assignment.Status.COMPLETED)
# The kinds of row of the capacity query: (held, completed) per text group, (started
# participants, their judged items) per participant group, and the released catch trials.
_HELD, _OWED, _CATCH = "held", "owed", "catch"


class Step:
    """Names of the pages a participant can be on (the `step` a token URL renders)."""

    CONSENT = "consent"
    INSTRUCTIONS = "instructions"
    WRITE = "write"
    JUDGE = "judge"
    CHECK = "check"  # an attention check between two texts (evidence.attention)
    DEBRIEF = "debrief"
    COMPLETED = "completed"
    RETURNED = "returned"
    TIMED_OUT = "timed_out"
    NOTHING_LEFT = "nothing_left"
    FULL = "full"


@dataclass(frozen=True)
class GroupCapacity:
    """Judgment slots of one person group, and how many of them are spoken for.

    `owed` counts the items still owed to the group's started participants (the items per
    participant minus what each has judged), whether or not their next assignment exists
    yet: assignments are created lazily, one per page, so counting assignments alone would
    not see the participants who have just enrolled.
    """

    group: str
    slots: int
    held: int
    completed: int
    owed: int

    @property
    def free_slots(self) -> int:
        """Return the slots no active or completed assignment holds."""
        return self.slots - self.held

    @property
    def unclaimed(self) -> int:
        """Return the slots neither judged nor owed to a started participant (may be < 0)."""
        return self.slots - self.completed - self.owed


@dataclass(frozen=True)
class IntruderTextView:
    """What an intruder may see of an anonymized text: its text and its placeholders only."""

    text: str
    placeholders: tuple[str, ...]


def study_get_by_slug(*, slug: str) -> Study | None:
    """Return the study with this slug, or None."""
    return Study.objects.filter(slug=slug).first()


def participant_get_by_token(*, token: str) -> Participant | None:
    """Return the participant holding this session token (with its study), or None."""
    if not token:
        return None
    return Participant.objects.select_related("study").filter(token=token).first()


def participant_get_by_pid(*, study: Study, prolific_pid: str) -> Participant | None:
    """Return the participant enrolled in `study` under this Prolific PID, or None."""
    return Participant.objects.filter(study=study, prolific_pid=prolific_pid).first()


def study_groups(*, study: Study) -> list[str]:
    """Return the person groups a study shows, in the order famous, semifamous, fictitious."""
    chosen = set(study.groups or PersonGroup.values)
    return [group for group in PersonGroup.values if group in chosen]


def writer_target_pool(*, study: Study, group: str) -> QuerySet[TargetPerson]:
    """Return the targets of `group` a writer in `study` may be asked to describe."""
    return TargetPerson.objects.filter(study=study, group=group).order_by("id")


def writing_task_next(*, participant: Participant) -> WritingTask | None:
    """Return the first writing task without a description, or None when all are written."""
    return (
        participant.writing_tasks.select_related("target")
        .filter(description__isnull=True)
        .order_by("position")
        .first()
    )


def writing_task_counts(*, participant: Participant) -> tuple[int, int]:
    """Return (descriptions written, tasks) for a writer."""
    tasks = participant.writing_tasks.aggregate(
        total=Count("id"), done=Count("id", filter=Q(description__isnull=False))
    )
    return tasks["done"], tasks["total"]


def intruder_text_pool(
    *, study: Study, group: str = "", catch: bool = False
) -> QuerySet[AnonymizedText]:
    """Return the released anonymized texts of `study` (of one person group, if given).

    The texts whose places intruders fill; `catch=True`: the study's catch trials instead
    (made-up persons, served to every intruder beyond the places, in any group).

    Selected through their target persons (a description's target is always of the
    description's study: every path that stores one takes both from the same study). The
    study's targets are then the one way in, by index, target -> description -> text,
    whatever the planner knows; filtering the descriptions by study as well let PostgreSQL,
    on a study's fresh tables without statistics, compare every description with every
    target (45 ms per count of 400 texts) or intersect the study's index per target.
    """
    if catch:
        return AnonymizedText.objects.filter(
            description__target__study=study,
            description__target__catch=True,
            status=AnonymizedText.Status.RELEASED,
        )
    return AnonymizedText.objects.filter(
        description__target__study=study,
        description__target__group__in=[group] if group else study_groups(study=study),
        description__target__catch=False,
        status=AnonymizedText.Status.RELEASED,
    )


def catch_trials_served(*, study: Study) -> int:
    """Return how many of an intruder's texts are catch trials: the study's setting, at most
    its released catch trials, and never all the texts (one real text at least)."""
    if not study.catch_trials_per_participant:
        return 0
    return catch_trials_per_intruder(study, intruder_text_pool(study=study, catch=True).count())


def catch_trials_per_intruder(study: Study, available: int) -> int:
    """Return how many of an intruder's texts are catch trials when the study has
    `available` of them released (one formula for assignment, capacity and rehearsals)."""
    return max(
        0, min(study.catch_trials_per_participant, available, study.items_per_participant - 1)
    )


def intruder_group_slots(*, study: Study) -> dict[str, int]:
    """Return each shown group's judgment slots: its released texts x judgments per text."""
    texts = dict(
        intruder_text_pool(study=study)
        .values_list("description__target__group")
        .annotate(n=Count("id"))
        .values_list("description__target__group", "n")
    )
    return {
        group: texts.get(group, 0) * study.judgments_per_text for group in study_groups(study=study)
    }


@dataclass(frozen=True)
class GroupReach:
    """How many texts one intruder of a group can get: its released texts, or, where each
    intruder sees a person once (`allow_same_target` off), the persons they are about."""

    group: str
    texts: int
    persons: int
    reachable: int
    announced: int

    @property
    def short(self) -> bool:
        return self.reachable < self.announced


def intruder_group_reach(*, study: Study) -> list[GroupReach]:
    """Return each shown group with released texts and what one intruder of it can get.

    Two texts about one person count once when the study shows each person once: with
    fewer persons than "texts per intruder" every intruder of the group stops short.
    """
    counts = {
        group: (texts, persons)
        for group, texts, persons in intruder_text_pool(study=study)
        .order_by()
        .values("description__target__group")
        .annotate(texts=Count("id"), persons=Count("description__target", distinct=True))
        .values_list("description__target__group", "texts", "persons")
    }
    reach = []
    # The texts per intruder that are not catch trials: what the group's texts must fill.
    announced = study.items_per_participant - catch_trials_served(study=study)
    for group in study_groups(study=study):
        texts, persons = counts.get(group, (0, 0))
        if texts:
            reachable = texts if study.allow_same_target else persons
            reach.append(GroupReach(group, texts, persons, reachable, announced))
    return reach


# Why an intruder got fewer texts than announced (`intruder_short_run_reason`).
SHORT_TOO_FEW = "too_few"
SHORT_SAME_PERSON = "same_person"
SHORT_FULL = "full"


def intruder_short_run_reason(*, participant: Participant) -> tuple[str, int]:
    """Return why the intruder's run ended before the announced number, and the texts (or
    persons) one intruder of their group can get at most.

    SHORT_TOO_FEW: the group never held enough texts (or persons) for anyone;
    SHORT_SAME_PERSON: texts still need answers but are about persons they have seen;
    SHORT_FULL: every text they may get has all its answers (or is being answered).
    """
    study = participant.study
    reach = next(
        (r for r in intruder_group_reach(study=study) if r.group == participant.group), None
    )
    reachable = reach.reachable if reach else 0
    if reach is None or reach.short:
        return SHORT_TOO_FEW, reachable
    if not study.allow_same_target:
        seen_targets = participant.assignments.values_list("text__description__target_id")
        seen_texts = participant.assignments.values_list("text__description_id")
        open_about_seen = (
            intruder_text_pool(study=study, group=participant.group)
            .filter(description__target_id__in=seen_targets)
            .exclude(description_id__in=seen_texts)
            .annotate(held=Count("assignments", filter=Q(assignments__status__in=HELD_STATUSES)))
            .filter(held__lt=study.judgments_per_text)
        )
        if open_about_seen.exists():
            return SHORT_SAME_PERSON, reachable
    return SHORT_FULL, reachable


@dataclass(frozen=True)
class CapacityQuery:
    """The SQL of the capacity counts, compiled before enrolment takes the study lock.

    Compiling it is most of what the counts cost the server (the ORM builds and compiles
    two grouped queries and their union; PostgreSQL runs them in about a millisecond), and
    under the lock every millisecond keeps the next enrolment waiting.
    """

    using: str
    sql: str
    params: tuple


def intruder_capacity_query(*, study: Study) -> CapacityQuery:
    """Return the compiled capacity query of `study`: held assignments by their text's group,
    and started participants with their judged items by their group, as one UNION ALL."""
    # From the pool to its held assignments (by the text index), not from every held
    # assignment of the database to the pool.
    held = (
        intruder_text_pool(study=study)
        .filter(assignments__status__in=HELD_STATUSES)
        .order_by()
        .values("description__target__group")
        .annotate(
            kind=Value(_HELD, output_field=CharField()),
            a=Count("assignments"),
            b=Count("assignments", filter=Q(assignments__status=Assignment.Status.COMPLETED)),
        )
        .values_list("kind", "description__target__group", "a", "b")
    )
    owed = (
        Participant.objects.filter(study=study, status=Participant.Status.STARTED)
        .exclude(group="")
        .order_by()
        .values("group")
        .annotate(
            kind=Value(_OWED, output_field=CharField()),
            a=Count("id", distinct=True),
            # Texts judged, catch trials aside: they hold no slot, and are not owed any.
            b=Count(
                "assignments",
                filter=Q(assignments__status=Assignment.Status.COMPLETED)
                & Q(assignments__text__description__target__catch=False),
            ),
        )
        .values_list("kind", "group", "a", "b")
    )
    # The released catch trials: of each intruder's texts, those hold no slot.
    catch = (
        intruder_text_pool(study=study, catch=True)
        .order_by()
        .values("description__target__group")
        .annotate(kind=Value(_CATCH, output_field=CharField()), a=Count("id"), b=Count("id"))
        .values_list("kind", "description__target__group", "a", "b")
    )
    both = held.union(owed, catch, all=True)
    sql, params = both.query.get_compiler(using=both.db).as_sql()
    return CapacityQuery(using=both.db, sql=sql, params=tuple(params))


def intruder_group_capacities(
    *, study: Study, slots: dict[str, int] | None = None, query: CapacityQuery | None = None
) -> list[GroupCapacity]:
    """Return the judgment capacity of each group the study shows, in the groups' order.

    One query whatever the study's size (`intruder_capacity_query`), plus one for the slots
    unless `slots` is given. Enrolment passes both, read and compiled before the study lock,
    so that only the counts themselves run under it.
    """
    slots = slots if slots is not None else intruder_group_slots(study=study)
    query = query or intruder_capacity_query(study=study)
    with connections[query.using].cursor() as cursor:
        cursor.execute(query.sql, query.params)
        rows = cursor.fetchall()
    counts: dict[tuple[str, str], tuple[int, int]] = {
        (kind, group): (a, b) for kind, group, a, b in rows if kind != _CATCH
    }
    catch = catch_trials_per_intruder(study, sum(a for kind, _, a, _ in rows if kind == _CATCH))
    return [
        GroupCapacity(
            group=group,
            slots=group_slots,
            held=counts.get((_HELD, group), (0, 0))[0],
            completed=counts.get((_HELD, group), (0, 0))[1],
            owed=_owed(
                counts.get((_OWED, group)),
                items=_items_in_group(study, group_slots, catch=catch),
            ),
        )
        for group, group_slots in slots.items()
    ]


def _items_in_group(study: Study, group_slots: int, *, catch: int) -> int:
    """Return how many of the group's texts one participant can get: N less the catch
    trials among them, or fewer texts."""
    return min(study.items_per_participant - catch, group_slots // study.judgments_per_text)


def _owed(row: tuple[int, int] | None, *, items: int) -> int:
    """Return the items owed to a group's started participants (never below 0)."""
    if row is None:
        return 0
    started, judged = row
    return max(0, started * items - judged)


@dataclass(frozen=True)
class IntruderProgress:
    """An intruder's assignment in progress (its text loaded) and how many texts they judged."""

    active: Assignment | None
    completed: int


def intruder_progress(*, participant: Participant) -> IntruderProgress:
    """Return the intruder's progress in one query (at most N held assignments are read)."""
    held = list(
        participant.assignments.filter(status__in=HELD_STATUSES)
        .select_related("text")
        .only(
            "id",
            "participant_id",
            "text_id",
            "position",
            "slot",
            "status",
            "assigned_at",
            "shown_at",
            "canary",  # the text page hides it in the text: deferred, it cost a query per page
            "text__id",
            "text__text",
            "text__spans",
            "text__status",
        )
        .order_by("position")
    )
    active = next((a for a in held if a.status == Assignment.Status.ACTIVE), None)
    completed = sum(a.status == Assignment.Status.COMPLETED for a in held)
    return IntruderProgress(active=active, completed=completed)


def assignment_completed_count(*, participant: Participant) -> int:
    """Return how many texts the participant has judged."""
    return participant.assignments.filter(status=Assignment.Status.COMPLETED).count()


def intruder_text_view(*, text: AnonymizedText) -> IntruderTextView:
    """Return the intruder-safe view of a text: never the spans' original strings."""
    placeholders = sorted(
        {span.get("placeholder", "") for span in text.spans or [] if span.get("placeholder")},
        key=len,
        reverse=True,
    )
    return IntruderTextView(text=text.text, placeholders=tuple(placeholders))


def participant_needs_group(*, participant: Participant) -> bool:
    """Return whether a started intruder has consented but holds no group (study was full)."""
    return (
        participant.study.kind == Study.Kind.INTRUDER
        and participant.status == Participant.Status.STARTED
        and participant.consented_at is not None
        and not participant.group
    )


def participant_step(*, participant: Participant, progress: IntruderProgress | None = None) -> str:
    """Return the step a participant is on, from what is stored (so a reload resumes).

    `progress` saves the query for an intruder past the instructions when the caller has it.
    """
    status = participant.status
    if status == Participant.Status.COMPLETED:
        return Step.COMPLETED
    if status == Participant.Status.RETURNED:
        return Step.RETURNED
    if status == Participant.Status.TIMED_OUT:
        return Step.TIMED_OUT
    if participant.consented_at is None:
        return Step.CONSENT
    study = participant.study
    if study.kind == Study.Kind.COLLECTION:
        return Step.WRITE if writing_task_next(participant=participant) else Step.DEBRIEF
    if not participant.group:
        # Consented while every slot was taken (a group is given at consent).
        return Step.FULL
    if participant.instructions_seen_at is None:
        return Step.INSTRUCTIONS
    progress = progress or intruder_progress(participant=participant)
    if progress.active is not None or progress.completed < study.items_per_participant:
        # Without an active text the view asks the assignment service for the next one; it
        # may find none left.
        return Step.JUDGE
    return Step.DEBRIEF

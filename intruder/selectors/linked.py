"""Linked studies: a writer study and an intruder study over the same target persons.

Writers see their targets' names (and fictitious persons' profiles); an intruder who has been
a writer of a linked study has seen the answers. Targets are rows of one study each, so two
studies are linked when a target of one has the name of a target of the other (case
ignored), or when an intruder test takes the other's descriptions (`Study.source_studies`).
Two studies of the same kind are never linked: nothing leaks between them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Lower

from intruder.models import Participant, Study, TargetPerson


def studies_linked(*, study: Study) -> QuerySet[Study]:
    """Return the studies of the other kind that share a target name with `study`."""
    return (
        Study.objects.exclude(pk=study.pk).exclude(kind=study.kind).filter(_shares_targets(study))
    )


def _shares_targets(study: Study) -> Q:
    """Match the studies with a target named as one of `study`'s (case ignored), and the
    studies that feed an intruder test or take its descriptions.

    Each is an EXISTS, with no join: a join over the sources needs a DISTINCT over every
    column of a study, which PostgreSQL's planner overestimated enough to JIT-compile it
    (70 ms a page).
    """
    names = TargetPerson.objects.filter(study=study).annotate(lower=Lower("name")).values("lower")
    shared = (
        TargetPerson.objects.filter(study=OuterRef("pk"))
        .annotate(lower=Lower("name"))
        .filter(lower__in=names)
    )
    sources = Study.source_studies.through.objects
    takes_from = sources.filter(from_study=OuterRef("pk"), to_study=study)
    feeds = sources.filter(from_study=study, to_study=OuterRef("pk"))
    return Q(Exists(shared)) | Q(Exists(takes_from)) | Q(Exists(feeds))


def studies_linked_open(*, study: Study) -> QuerySet[Study]:
    """Return the studies linked to `study` that are open for enrolment."""
    return studies_linked(study=study).filter(is_open=True)


def participant_in_linked_study(*, study: Study, prolific_pid: str) -> bool:
    """Return whether this PID has taken part in a study linked to `study`.

    The PID's other enrolments are read first (an index lookup, usually none), so the join over
    target names runs only for PIDs seen elsewhere.
    """
    other_studies = list(
        Participant.objects.filter(prolific_pid=prolific_pid)
        .exclude(study=study)
        .values_list("study_id", flat=True)
    )
    if not other_studies:
        return False
    return studies_linked(study=study).filter(pk__in=other_studies).exists()


# Other crowds over the same targets --------------------------------------------------------
# A crowd annotation project built from a study's descriptions holds the originals: the names
# and profiles intruders are asked to find. The annotation app registers how to find its
# projects linked to a study (`register_linked_crowd`), so that enrolment and opening a
# study consult them without this module knowing the annotation tables.


@dataclass(frozen=True)
class LinkedCrowd:
    """Another crowd over a study's targets: whether one of it is open, and whether a PID
    is in it."""

    is_open: Callable[[Study], bool]
    has_pid: Callable[[Study, str], bool]


LINKED_CROWDS: list[LinkedCrowd] = []


def register_linked_crowd(crowd: LinkedCrowd) -> None:
    """Register another crowd whose members must not be a study's intruders."""
    LINKED_CROWDS.append(crowd)


def linked_crowd_open(*, study: Study) -> bool:
    """Return whether a crowd linked to `study` (an annotation project) is open."""
    return any(crowd.is_open(study) for crowd in LINKED_CROWDS)


def pid_in_linked_crowd(*, study: Study, prolific_pid: str) -> bool:
    """Return whether this PID is a member of a crowd linked to `study`."""
    return any(crowd.has_pid(study, prolific_pid) for crowd in LINKED_CROWDS)


def studies_same_targets(*, study: Study) -> QuerySet[Study]:
    """Return `study` and every study, of either kind, over one of its target persons."""
    return Study.objects.filter(Q(pk=study.pk) | _shares_targets(study))

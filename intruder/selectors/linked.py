"""Linked studies: a writer study and an intruder study over the same target persons.

Writers see their targets' names (and fictitious persons' profiles); an intruder who has been
a writer of a linked study has seen the answers. Targets are rows of one study each, so two
studies are linked when a target of one has the name of a target of the other (case
ignored), or when an intruder test takes the other's descriptions (`Study.source_studies`).
Two studies of the same kind are never linked: nothing leaks between them.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Lower

from intruder.models import Participant, Study, TargetPerson


def studies_linked(*, study: Study) -> QuerySet[Study]:
    """Return the studies of the other kind that share a target name with `study`."""
    names = TargetPerson.objects.filter(study=study).annotate(lower=Lower("name")).values("lower")
    shared = (
        TargetPerson.objects.filter(study=OuterRef("pk"))
        .annotate(lower=Lower("name"))
        .filter(lower__in=names)
    )
    fed = Q(source_studies=study) | Q(fed_studies=study)  # an intruder test and its sources
    return (
        Study.objects.exclude(pk=study.pk)
        .exclude(kind=study.kind)
        .filter(Q(Exists(shared)) | fed)
        .distinct()
    )


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

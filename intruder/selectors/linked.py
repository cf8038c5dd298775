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


# Crowd annotation projects ------------------------------------------------------------------
# A project built from a study's descriptions holds the originals: the names and profiles
# intruders are asked to find. It counts as linked to every intruder study over the same
# targets (the study itself, its source studies, studies sharing a target name).


def studies_same_targets(*, study: Study) -> QuerySet[Study]:
    """Return `study` and every study, of either kind, over one of its target persons."""
    return Study.objects.filter(Q(pk=study.pk) | _shares_targets(study))


def _original_refs(*, studies: QuerySet[Study]) -> QuerySet:
    """Return the `source_ref` values of project documents copied from these studies."""
    from django.db.models import CharField
    from django.db.models.functions import Cast

    from intruder.models import Description

    return (
        Description.objects.filter(study__in=studies.values("pk"))
        .annotate(ref=Cast("pk", CharField()))
        .values("ref")
    )


def projects_linked(*, study: Study):
    """Return the annotation projects holding originals of `study`'s targets (intruder side)."""
    from intruder.annotation.models import Document, Project

    originals = Document.objects.filter(source=Document.Source.DESCRIPTION)
    # Most platforms hold no copied originals: one index probe then spares every enrolment
    # the join over target names (45 ms a request on PostgreSQL in the load benchmark).
    if study.kind != Study.Kind.INTRUDER or not originals.exists():
        return Project.objects.none()
    documents = originals.filter(
        source_ref__in=_original_refs(studies=studies_same_targets(study=study))
    )
    return Project.objects.filter(pk__in=documents.values("project_id"))


def project_source_studies(*, project) -> QuerySet[Study]:
    """Return the studies whose descriptions (originals) the project holds."""
    from intruder.models import Description

    refs = [
        int(ref)
        for ref in project.documents.filter(source="description").values_list(
            "source_ref", flat=True
        )
        if ref.isdigit()
    ]
    return Study.objects.filter(
        pk__in=Description.objects.filter(pk__in=refs).values("study_id")
    ).distinct()


def studies_linked_to_project(*, project) -> QuerySet[Study]:
    """Return the intruder studies over the same targets as the originals the project holds."""
    ids: set[int] = set()
    for source in project_source_studies(project=project):
        ids |= set(studies_same_targets(study=source).values_list("pk", flat=True))
    return Study.objects.filter(pk__in=ids, kind=Study.Kind.INTRUDER)


def pid_annotates_linked_project(*, study: Study, prolific_pid: str) -> bool:
    """Return whether this PID is a crowd annotator of a project linked to `study`."""
    from intruder.annotation.models import Annotator

    projects = Annotator.objects.filter(prolific_pid=prolific_pid).values("project_id")
    if not projects.exists():
        return False
    return projects_linked(study=study).filter(pk__in=projects).exists()


def pid_in_project_linked_study(*, project, prolific_pid: str) -> bool:
    """Return whether this PID took part in an intruder study linked to the project."""
    studies = Participant.objects.filter(prolific_pid=prolific_pid).values("study_id")
    if not studies.exists():
        return False
    return studies_linked_to_project(project=project).filter(pk__in=studies).exists()

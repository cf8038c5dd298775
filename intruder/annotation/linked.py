"""Crowd annotation projects linked to studies: a project built from a study's descriptions
holds the originals (the names and profiles intruders are asked to find), so it counts as
linked to every intruder study over the same targets (the study itself, its source studies,
studies sharing a target name). Registered with `intruder.selectors.linked` so that
enrolment and opening a study consult it.
"""

from __future__ import annotations

from django.db.models import CharField, QuerySet
from django.db.models.functions import Cast

from intruder.annotation.models import Annotator, Document, Project
from intruder.models import Description, Participant, Study
from intruder.selectors.linked import LinkedCrowd, register_linked_crowd, studies_same_targets


def _original_refs(*, studies: QuerySet[Study]) -> QuerySet:
    """Return the `source_ref` values of project documents copied from these studies."""
    return (
        Description.objects.filter(study__in=studies.values("pk"))
        .annotate(ref=Cast("pk", CharField()))
        .values("ref")
    )


def projects_linked(*, study: Study):
    """Return the annotation projects holding originals of `study`'s targets (intruder side)."""
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


register_linked_crowd(
    LinkedCrowd(
        is_open=lambda study: projects_linked(study=study).filter(is_open=True).exists(),
        has_pid=lambda study, pid: pid_annotates_linked_project(study=study, prolific_pid=pid),
    )
)

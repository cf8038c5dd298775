"""Reads of annotation projects: access, task state, gold documents for export and scoring."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet

from anonymize.annotations.schema import AnnotatedDocument
from anonymize.annotations.schema import Mention as LibraryMention
from intruder.annotation.adjudication import GOLD_LAYER
from intruder.annotation.models import (
    HELD_STATUSES,
    Annotator,
    Document,
    Mention,
    Project,
    ProjectMember,
    SuggestionDecision,
    Task,
)
from intruder.models import AnonymizedText, Description, StudyMember
from intruder.selectors.access import READ_ROLES
from intruder.selectors.counts import count_by


def _study_annotator_projects(user: Any) -> Q:
    """Match projects holding texts of a study where `user` has the "PSI annotator" role.

    Only projects owned by the study's owner or one of its researchers (editor, viewer)
    count: a project anyone made from the study's texts grants nothing.
    """
    q = Q(pk__in=[])
    memberships = StudyMember.objects.filter(user=user, role=StudyMember.Role.ANNOTATOR)
    for study_id, owner_id in memberships.values_list("study_id", "study__owner_id"):
        researchers = {owner_id} | set(
            StudyMember.objects.filter(study_id=study_id, role__in=READ_ROLES).values_list(
                "user_id", flat=True
            )
        )
        descriptions = Description.objects.filter(study_id=study_id).values_list("pk", flat=True)
        texts = AnonymizedText.objects.filter(description__study_id=study_id).values_list(
            "pk", flat=True
        )
        q |= Q(owner_id__in=researchers) & (
            Q(
                documents__source=Document.Source.DESCRIPTION,
                documents__source_ref__in=[str(pk) for pk in descriptions],
            )
            | Q(
                documents__source=Document.Source.ANONYMIZED,
                documents__source_ref__in=[str(pk) for pk in texts],
            )
        )
    return q


def projects_for_user(*, user: Any) -> QuerySet[Project]:
    """Return the projects a researcher owns, is a member of, or annotates through a study's
    "PSI annotator" role (all for superusers)."""
    projects = Project.objects.all()
    if not user.is_superuser:
        mine = Q(owner=user) | Q(members__user=user) | _study_annotator_projects(user)
        projects = Project.objects.filter(pk__in=Project.objects.filter(mine).values("pk"))
    return projects.annotate(n_documents=Count("documents", distinct=True))


def project_role(*, project: Project, user: Any) -> str | None:
    """Return "manager", "annotator" or None for a researcher on a project.

    A study's "PSI annotator" members annotate every project that holds the study's texts.
    """
    if not user.is_authenticated:
        return None
    if user.is_superuser or project.owner_id == user.pk:
        return ProjectMember.Role.MANAGER
    member = project.members.filter(user=user).first()
    if member is not None:
        return member.role
    if Project.objects.filter(_study_annotator_projects(user), pk=project.pk).exists():
        return ProjectMember.Role.ANNOTATOR
    return None


def annotator_get_by_token(*, token: str) -> Annotator | None:
    """Return the crowd annotator holding this token (with its project), or None."""
    if not token:
        return None
    return (
        Annotator.objects.select_related("project").filter(token=token, prolific_pid__gt="").first()
    )


def project_progress(*, project: Project) -> dict[str, int]:
    """Return counts of documents, needed annotations, submitted and active tasks."""
    tasks = Task.objects.filter(document__project=project)
    documents = project.documents.count()
    return {
        "documents": documents,
        "needed": documents * project.annotators_per_text,
        "submitted": tasks.filter(status=Task.Status.SUBMITTED).count(),
        "active": tasks.filter(status=Task.Status.ACTIVE).count(),
        "annotators": project.annotators.count(),
    }


def documents_with_counts(*, project: Project) -> QuerySet[Document]:
    """Return the project's documents with their held and submitted task counts."""
    return project.documents.annotate(
        held=Count("tasks", filter=Q(tasks__status__in=HELD_STATUSES)),
        submitted=Count("tasks", filter=Q(tasks__status=Task.Status.SUBMITTED)),
    )


def mention_to_dict(mention: Mention) -> dict[str, Any]:
    """Return a mention as the annotation page's JSON."""
    return {
        "start": mention.start,
        "end": mention.end,
        "entity_type": mention.entity_type,
        "identifier_type": mention.identifier_type,
        "confidential_status": mention.confidential_status,
        "entity": mention.entity,
        "suggestion": mention.suggestion,
        "edit_type": mention.edit_type,
    }


def task_state(*, task: Task) -> dict[str, Any]:
    """Return everything the annotation page needs for one task, and nothing of others' work
    unless the project shows it (then anonymised as "annotator N")."""
    document = task.document
    project = document.project
    decisions = {d.suggestion: d.decision for d in task.decisions.all()}
    state: dict[str, Any] = {
        "task": {"id": task.pk, "revision": task.revision, "status": task.status},
        "document": {"doc_id": document.doc_id, "text": document.text},
        "mentions": [mention_to_dict(m) for m in task.mentions.all()],
        "suggestions": [
            {**s, "index": i, "decision": decisions.get(i, "")}
            for i, s in enumerate(document.suggestions if project.pre_annotate else [])
        ],
        "others": [],
    }
    if project.show_others_work:
        others = (
            document.tasks.filter(status=Task.Status.SUBMITTED)
            .exclude(pk=task.pk)
            .order_by("slot")
            .prefetch_related("mentions")
        )
        state["others"] = [
            {
                "annotator": f"annotator {other.slot}",
                "mentions": [mention_to_dict(m) for m in other.mentions.all()],
            }
            for other in others
        ]
    return state


def project_gold(
    *, project: Project, include_active: bool = False, include_adjudicated: bool = True
) -> list[AnnotatedDocument]:
    """Return the project's documents with each annotator's submitted mentions, as TAB needs.

    Entity ids are made unique across annotators (`<doc>_<annotator>_<entity>`), mention ids
    likewise; documents nobody has submitted are left out. `include_adjudicated=False` leaves
    the adjudicated gold layer out (agreement and evaluation compare independent annotators).
    """
    statuses = [Task.Status.SUBMITTED] + ([Task.Status.ACTIVE] if include_active else [])
    tasks = Task.objects.filter(document__project=project, status__in=statuses)
    if not include_adjudicated:
        tasks = tasks.exclude(annotator__name=GOLD_LAYER)
    tasks = (
        tasks.select_related("document", "annotator__user")
        .prefetch_related("mentions")
        .order_by("document_id", "slot")
    )
    documents: dict[int, AnnotatedDocument] = {}
    for task in tasks:
        document = task.document
        gold = documents.setdefault(
            document.pk,
            AnnotatedDocument(
                document.doc_id,
                document.text,
                dataset_type=document.dataset_type,
                meta={"source": document.source},
            ),
        )
        label = task.annotator.label
        gold.annotations[label] = [
            LibraryMention(
                start=m.start,
                end=m.end,
                entity_type=m.entity_type,
                entity_id=f"{document.doc_id}_{label}_{m.entity}",
                identifier_type=m.identifier_type,
                confidential_status=m.confidential_status,
                edit_type=m.edit_type,
                mention_id=f"{document.doc_id}_{label}_m{number}",
            )
            for number, m in enumerate(task.mentions.all(), start=1)
        ]
    return list(documents.values())


def suggestion_decision_counts(*, project: Project) -> dict[str, int]:
    """Return how often suggestions were accepted, corrected, rejected (automation bias)."""
    decisions = SuggestionDecision.objects.filter(task__document__project=project)
    result = {d: 0 for d in ("accepted", "corrected", "rejected")}
    result |= count_by(decisions, "decision")
    suggested = sum(
        len(s)
        # Imported layers never saw the suggestions: only work done on the platform counts.
        for s in Task.objects.filter(
            document__project=project, status="submitted", annotator__name=""
        ).values_list("document__suggestions", flat=True)
    )
    result["suggested_in_submitted_tasks"] = suggested
    return result

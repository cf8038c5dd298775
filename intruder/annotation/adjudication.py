"""Adjudication: merge two annotators' layers into one gold layer, disagreements listed.

Where both layers hold the same span with the same category, the gold layer takes it (A's
attributes). Every other mention is part of a *disagreement*: the mentions of either layer
that overlap one another form one group (a category clash, a boundary clash, or a span only
one annotator marked), and the adjudicator keeps A's side, B's side or neither. The gold
layer is an annotation layer named "gold" (`GOLD_LAYER`): exported with the others, but
left out of agreement and evaluation, which compare independent annotators.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from intruder.annotation.models import Annotator, Document, Mention, Project, Task

GOLD_LAYER = "gold"
CHOICES = ("a", "b", "neither")


@dataclass
class Side:
    """One annotator's mentions in a disagreement group."""

    mentions: list[Mention] = field(default_factory=list)

    def describe(self, text: str) -> str:
        """Return "“span” CATEGORY; ..." or "nothing marked"."""
        if not self.mentions:
            return "nothing marked"
        return "; ".join(f"“{text[m.start : m.end]}” {m.entity_type}" for m in self.mentions)


@dataclass
class Disagreement:
    """Overlapping mentions of two layers that are not the same span and category."""

    key: str  # "<document pk>:<start>:<end>", stable across page loads
    document: Document
    start: int
    end: int
    a: Side
    b: Side

    @property
    def text(self) -> str:
        return self.document.text[self.start : self.end]

    @property
    def a_text(self) -> str:
        return self.a.describe(self.document.text)

    @property
    def b_text(self) -> str:
        return self.b.describe(self.document.text)

    @property
    def kind(self) -> str:
        """Return "category", "boundaries", "only A" or "only B"."""
        if not self.b.mentions:
            return "only A"
        if not self.a.mentions:
            return "only B"
        spans_a = {(m.start, m.end) for m in self.a.mentions}
        spans_b = {(m.start, m.end) for m in self.b.mentions}
        return "category" if spans_a == spans_b else "boundaries"


@dataclass
class Comparison:
    """Two layers compared over the documents both submitted."""

    first: Annotator
    second: Annotator
    documents: int
    agreed: list[Mention]
    disagreements: list[Disagreement]


def adjudicable_annotators(*, project: Project) -> list[Annotator]:
    """Return the annotators with submitted work (the gold layer itself excluded)."""
    return list(
        Annotator.objects.filter(project=project, tasks__status=Task.Status.SUBMITTED)
        .exclude(name=GOLD_LAYER)
        .select_related("user")
        .distinct()
        .order_by("id")
    )


def _submitted(annotator: Annotator) -> dict[int, Task]:
    tasks = Task.objects.filter(annotator=annotator, status=Task.Status.SUBMITTED)
    return {t.document_id: t for t in tasks.prefetch_related("mentions").select_related("document")}


def adjudication_compare(*, project: Project, first: Annotator, second: Annotator) -> Comparison:
    """Compare two annotators' submitted layers document by document."""
    if first.pk == second.pk:
        raise ValidationError("choose two different annotators")
    if first.project_id != project.pk or second.project_id != project.pk:
        raise ValidationError("both annotators must belong to this project")
    tasks_a, tasks_b = _submitted(first), _submitted(second)
    shared = sorted(set(tasks_a) & set(tasks_b))
    agreed: list[Mention] = []
    disagreements: list[Disagreement] = []
    for document_id in shared:
        task_a, task_b = tasks_a[document_id], tasks_b[document_id]
        a = list(task_a.mentions.all())
        b = list(task_b.mentions.all())
        same = {(m.start, m.end, m.entity_type) for m in a} & {
            (m.start, m.end, m.entity_type) for m in b
        }
        agreed += [m for m in a if (m.start, m.end, m.entity_type) in same]
        rest = [("a", m) for m in a if (m.start, m.end, m.entity_type) not in same]
        rest += [("b", m) for m in b if (m.start, m.end, m.entity_type) not in same]
        rest.sort(key=lambda item: (item[1].start, item[1].end))
        group: list[tuple[str, Mention]] = []
        group_end = -1
        for side, mention in [*rest, ("end", None)]:
            if mention is None or (group and mention.start >= group_end):
                if group:
                    disagreements.append(_disagreement(task_a.document, group))
                group, group_end = [], -1
            if mention is not None:
                group.append((side, mention))
                group_end = max(group_end, mention.end)
    return Comparison(first, second, len(shared), agreed, disagreements)


def _disagreement(document: Document, group: list[tuple[str, Mention]]) -> Disagreement:
    start = min(m.start for _, m in group)
    end = max(m.end for _, m in group)
    return Disagreement(
        key=f"{document.pk}:{start}:{end}",
        document=document,
        start=start,
        end=end,
        a=Side([m for side, m in group if side == "a"]),
        b=Side([m for side, m in group if side == "b"]),
    )


def _gold_annotator(project: Project) -> Annotator:
    annotator, _ = Annotator.objects.get_or_create(project=project, name=GOLD_LAYER)
    return annotator


@transaction.atomic
def adjudication_merge(
    *, project: Project, first: Annotator, second: Annotator, choices: Mapping[str, str]
) -> dict[str, int]:
    """Write the gold layer: agreed mentions plus the side chosen per disagreement.

    `choices` maps each disagreement's key to "a", "b" or "neither"; every disagreement
    needs one (ValidationError names how many are undecided). A document's earlier gold
    layer is replaced.
    """
    comparison = adjudication_compare(project=project, first=first, second=second)
    undecided = [d for d in comparison.disagreements if choices.get(d.key) not in CHOICES]
    if undecided:
        raise ValidationError(
            f"{len(undecided)} disagreement(s) undecided: keep A, keep B or neither for each"
        )
    kept: dict[int, list[tuple[str, Mention]]] = {}
    for mention in comparison.agreed:
        kept.setdefault(mention.task.document_id, []).append(("a", mention))
    for disagreement in comparison.disagreements:
        choice = choices[disagreement.key]
        side = {"a": disagreement.a, "b": disagreement.b}.get(choice)
        for mention in side.mentions if side else []:
            kept.setdefault(disagreement.document.pk, []).append((choice, mention))
    gold = _gold_annotator(project)
    documents = sorted(
        {m.task.document_id for m in comparison.agreed}
        | set(kept)
        | {d.document.pk for d in comparison.disagreements}
    )
    # Beyond every slot an annotator can be assigned: the gold layer never takes a seat.
    top = Task.objects.filter(document__project=project).aggregate(top=Max("slot"))["top"] or 0
    slot = max(top, project.annotators_per_text) + 1
    counts = {"documents": 0, "mentions": 0, "disagreements": len(comparison.disagreements)}
    for document_id in documents:
        task, _ = Task.objects.update_or_create(
            document_id=document_id,
            annotator=gold,
            defaults={"status": Task.Status.SUBMITTED, "submitted_at": timezone.now()},
            create_defaults={
                "slot": slot,
                "status": Task.Status.SUBMITTED,
                "submitted_at": timezone.now(),
            },
        )
        task.mentions.all().delete()
        rows = {}
        for side, m in kept.get(document_id, []):
            rows[(m.start, m.end)] = Mention(
                task=task,
                start=m.start,
                end=m.end,
                entity_type=m.entity_type,
                identifier_type=m.identifier_type,
                confidential_status=m.confidential_status,
                # Entity keys are per task: keep each side's apart.
                entity=f"{side}-{m.entity}"[:64],
                edit_type=m.edit_type,
            )
        Mention.objects.bulk_create(rows.values())
        counts["documents"] += 1
        counts["mentions"] += len(rows)
    return counts

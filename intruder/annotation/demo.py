"""The demo annotation project `demo-annotation`: the demo descriptions, pre-annotated by the
shipped model, with two simulated annotators' submitted work.

The two annotators are rule-based stand-ins built from data written for this project (the
invented persons' profiles in intruder/demo/targets.jsonl) and the model's suggestions, so
that agreement and evaluation show numbers in the first minute. They are not human work and
the project page says so; real annotators add their own layers beside them.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from anonymize.annotations.schema import AnnotatedDocument, Mention
from intruder.annotation.models import Project
from intruder.annotation.services import (
    annotations_import,
    documents_add_from_study,
    project_create,
    suggestions_compute,
)
from intruder.models import Study

SLUG = "demo-annotation"
GUIDELINES = (
    "Mark every piece of text that could help identify the person described: names, places, "
    "organisations, dates, jobs, ages and other details. Mark names and contact details as "
    "DIRECT identifiers, everything else that should be masked as QUASI. Link every mention "
    "of the same entity (Marta, Ms Lindqvist) to one entity.\n\n"
    "The two annotators already in this demo (demo-anna, demo-ben) are simulated from the "
    "invented persons' profiles and the model's suggestions; they are not human work."
)


def _occurrences(text: str, value: str) -> list[tuple[int, int]]:
    if not value:
        return []
    return [(m.start(), m.end()) for m in re.finditer(rf"\b{re.escape(value)}\b", text)]


def _profile_marks(text: str, target: Any, with_age: bool) -> list[Mention]:
    profile = target.profile or {}
    first, _, last = target.name.partition(" ")
    fields = [
        (profile.get("first_name", first), "PERSON_FIRSTNAME", "DIRECT", "person"),
        (profile.get("last_name", last), "PERSON_LASTNAME", "DIRECT", "person"),
        *((alias, "PERSON_FIRSTNAME", "DIRECT", "person") for alias in target.aliases),
        (profile.get("job", ""), "OCCUPATION", "QUASI", "job"),
        (profile.get("country", ""), "LOCATION", "QUASI", "country"),
    ]
    if with_age and profile.get("age"):
        fields.append((str(profile["age"]), "NUMERIC", "QUASI", "age"))
    marks = []
    for value, category, identifier, entity in fields:
        for start, end in _occurrences(text, value):
            marks.append(Mention(start, end, category, entity, identifier))
    return marks


def _layer(document: Any, target: Any, with_age: bool, min_score: float) -> list[Mention]:
    marks = _profile_marks(document.text, target, with_age)
    taken = {i for m in marks for i in range(m.start, m.end)}
    for s in document.suggestions:
        if s["score"] >= min_score and not taken & set(range(s["start"], s["end"])):
            identifier = "DIRECT" if s["category"].startswith("PERSON_") else "QUASI"
            marks.append(
                Mention(
                    s["start"], s["end"], s["category"], s["entity"], identifier, edit_type="check"
                )
            )
            taken |= set(range(s["start"], s["end"]))
    return sorted(marks, key=lambda m: m.start)


def demo_annotation_load(*, owner: Any, study: Study) -> Project:
    """Create (once) the demo annotation project over the study's descriptions."""
    project = Project.objects.filter(slug=SLUG).first()
    if project is None:
        project = project_create(
            owner=owner,
            slug=SLUG,
            title="Demo: PSI annotation of the demo descriptions",
            scheme=Project.Scheme.TEXTWASH,
            annotators_per_text=3,
            texts_per_annotator=5,
            guidelines=GUIDELINES,
        )
    documents_add_from_study(project=project, study=study, what="descriptions")
    # Without a model the project works without suggestions.
    with contextlib.suppress(FileNotFoundError, OSError):
        suggestions_compute(project=project)
    if project.annotators.filter(name__in=["demo-anna", "demo-ben"]).exists():
        return project
    targets = {d.pk: d.target for d in study.descriptions.select_related("target")}
    layers = []
    for document in project.documents.all():
        target = targets.get(int(document.source_ref)) if document.source_ref else None
        if target is None:
            continue
        layers.append(
            AnnotatedDocument(
                document.doc_id,
                document.text,
                {
                    "demo-anna": _layer(document, target, with_age=True, min_score=0.9),
                    "demo-ben": _layer(document, target, with_age=False, min_score=0.5),
                },
            )
        )
    annotations_import(project=project, documents=layers)
    return project

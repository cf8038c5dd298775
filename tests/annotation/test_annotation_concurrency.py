"""Real concurrency on PostgreSQL: crowd annotators race for the last slots and save twice."""

from __future__ import annotations

import random
from collections import Counter

from anonymize.annotations.schema import AnnotatedDocument
from intruder.annotation import services
from intruder.annotation.models import Task
from tests.intruder.factories import make_user
from tests.races import POSTGRES_RACES, run_threads

pytestmark = POSTGRES_RACES

ANNOTATORS = 12
DOCUMENTS = 5
PER_TEXT = 2


def test_racing_annotators_never_over_assign_a_text():
    project = services.project_create(
        owner=make_user(),
        slug="race",
        title="race",
        scheme="textwash",
        annotators_per_text=PER_TEXT,
        texts_per_annotator=3,
        pre_annotate=False,
        is_open=True,  # projects start closed
    )
    services.documents_add(
        project=project,
        documents=[AnnotatedDocument(f"d{i}", f"Text {i} about Orla.") for i in range(DOCUMENTS)],
    )
    annotators = [
        services.annotator_enroll(project=project, prolific_pid=f"RACE{i:03d}")
        for i in range(ANNOTATORS)
    ]

    def work(annotator, seed):
        rng = random.Random(seed)
        while (task := services.task_next(annotator=annotator, rng=rng)) is not None:
            services.task_submit(task=task)

    errors = run_threads(work, [(a, i) for i, a in enumerate(annotators)])
    assert errors == []
    per_document = Counter(Task.objects.values_list("document__doc_id", flat=True))
    assert per_document == {f"d{i}": PER_TEXT for i in range(DOCUMENTS)}


def test_two_tabs_saving_at_once_one_wins_and_one_gets_a_conflict():
    project = services.project_create(
        owner=make_user(), slug="tabs", title="tabs", scheme="textwash", pre_annotate=False
    )
    services.documents_add(project=project, documents=[AnnotatedDocument("d", "Orla met Ivo.")])
    task = services.task_next(
        annotator=services.annotator_for_user(project=project, user=project.owner)
    )
    outcomes = []

    def save(word):
        start = task.document.text.index(word)
        try:
            services.task_save(
                task=Task.objects.get(pk=task.pk),
                revision=0,
                mentions=[
                    {
                        "start": start,
                        "end": start + len(word),
                        "entity_type": "PERSON_FIRSTNAME",
                        "identifier_type": "DIRECT",
                        "entity": word,
                    }
                ],
            )
            outcomes.append("saved")
        except services.SaveConflict:
            outcomes.append("conflict")

    assert run_threads(save, [("Orla",), ("Ivo",)]) == []
    assert sorted(outcomes) == ["conflict", "saved"]
    assert Task.objects.get(pk=task.pk).revision == 1 and task.mentions.count() == 1


def test_the_same_file_added_nine_times_at_once_is_added_once_and_never_fails():
    """Parallel "add texts" of one file (5 of 9 answered 500): each finds the others' texts."""
    project = services.project_create(
        owner=make_user(), slug="adds", title="adds", scheme="textwash", pre_annotate=False
    )
    documents = [AnnotatedDocument(f"d{i}", f"Text {i} about Orla.") for i in range(20)]
    counts = []

    def add():
        counts.append(services.documents_add(project=project, documents=documents))

    errors = run_threads(add, [()] * 9)
    assert errors == []
    assert sorted(c["created"] for c in counts) == [0] * 8 + [20]
    assert all(c["created"] + c["skipped"] == 20 for c in counts)
    assert project.documents.count() == 20

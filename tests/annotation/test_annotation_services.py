"""Assignment, autosave, suggestions and import of the annotation app."""

from __future__ import annotations

import random

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from anonymize.annotations.schema import AnnotatedDocument
from anonymize.annotations.schema import Mention as LibraryMention
from intruder.annotation import services
from intruder.annotation.models import Annotator, SuggestionDecision, Task
from intruder.annotation.selectors import project_gold, task_state
from tests.annotation.conftest import TEXTS, make_project, mention
from tests.intruder.factories import make_user

pytestmark = pytest.mark.django_db


def crowd(project, n):
    return [
        services.annotator_enroll(project=project, prolific_pid=f"PID{i:04d}") for i in range(n)
    ]


def test_each_text_gets_exactly_the_configured_number_of_annotators(fake_anonymizer):
    project = make_project(annotators_per_text=2, texts_per_annotator=3)
    rng = random.Random(3)
    claimed = []
    for annotator in crowd(project, 5):
        while (task := services.task_next(annotator=annotator, rng=rng)) is not None:
            services.task_submit(task=task)
            claimed.append(task.document.doc_id)
    # 3 texts x 2 annotators = 6 slots, spread evenly; later annotators find nothing left.
    assert sorted(claimed) == ["d1", "d1", "d2", "d2", "d3", "d3"]


def test_the_database_refuses_a_second_holder_of_a_slot(fake_anonymizer):
    project = make_project()
    first, second = crowd(project, 2)
    document = project.documents.first()
    Task.objects.create(document=document, annotator=first, slot=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Task.objects.create(document=document, annotator=second, slot=1)


def test_crowd_annotators_stop_after_their_quota(fake_anonymizer):
    project = make_project(annotators_per_text=3, texts_per_annotator=2)
    (annotator,) = crowd(project, 1)
    for _ in range(2):
        services.task_submit(task=services.task_next(annotator=annotator))
    assert services.task_next(annotator=annotator) is None


def test_suggestions_come_from_the_anonymizer_grouped_by_placeholder(fake_anonymizer):
    project = make_project()
    suggestions = project.documents.get(doc_id="d1").suggestions
    orla = [s for s in suggestions if TEXTS["d1"][s["start"] : s["end"]] == "Orla"]
    assert len(orla) == 2 and orla[0]["entity"] == orla[1]["entity"]


def test_save_snaps_records_edit_types_and_decisions(fake_anonymizer):
    project = make_project()
    annotator = services.annotator_for_user(project=project, user=project.owner)
    task = services.task_next(annotator=annotator)
    text = task.document.text
    suggestions = task.document.suggestions
    accepted, corrected, rejected = 0, 1, 2
    s_accept, s_correct = suggestions[accepted], suggestions[corrected]
    mentions = [
        {**mention(text, text[s_accept["start"] : s_accept["end"]]), "suggestion": accepted},
        {
            **mention(text, text[s_correct["start"] : s_correct["end"]], "LOCATION"),
            "suggestion": corrected,
        },
    ]
    # A selection inside a word grows to the whole word.
    word = "later" if "later" in text else text.split()[-1]
    start = text.index(word) + 1
    mentions.append({**mention(text, word, "OTHER_IDENTIFYING_ATTRIBUTE"), "start": start})
    task = services.task_save(task=task, revision=0, mentions=mentions, rejected=[rejected])
    assert task.revision == 1
    saved = {(m.start, m.end): m.edit_type for m in task.mentions.all()}
    assert saved[(s_accept["start"], s_accept["end"])] == "check"
    assert saved[(s_correct["start"], s_correct["end"])] == "correct"
    assert saved[(text.index(word), text.index(word) + len(word))] == "insert"
    decisions = dict(SuggestionDecision.objects.values_list("suggestion", "decision"))
    assert decisions == {accepted: "accepted", corrected: "corrected", rejected: "rejected"}


def test_a_stale_save_is_a_conflict_and_changes_nothing(fake_anonymizer):
    project = make_project()
    task = services.task_next(
        annotator=services.annotator_for_user(project=project, user=project.owner)
    )
    text = task.document.text
    services.task_save(task=task, revision=0, mentions=[mention(text, text.split()[0])])
    with pytest.raises(services.SaveConflict) as conflict:
        services.task_save(task=task, revision=0, mentions=[])
    assert conflict.value.state["task"]["revision"] == 1
    assert task.mentions.count() == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"start": 0, "end": 999}, "outside the text"),
        ({"entity_type": "ALIEN"}, "unknown category"),
        ({"identifier_type": "MAYBE"}, "identifier type"),
        ({"entity": ""}, "belongs to an entity"),
        ({"suggestion": 99}, "unknown suggestion"),
        ({"start": "a"}, "integers"),
    ],
)
def test_invalid_mentions_are_refused_with_the_reason(fake_anonymizer, change, message):
    project = make_project()
    task = services.task_next(
        annotator=services.annotator_for_user(project=project, user=project.owner)
    )
    bad = {**mention(task.document.text, task.document.text.split()[0]), **change}
    with pytest.raises(ValidationError, match=message):
        services.task_save(task=task, revision=0, mentions=[bad])
    assert Task.objects.get(pk=task.pk).revision == 0


def test_gold_export_uses_python_offsets_and_unique_entity_ids(fake_anonymizer):
    project = make_project(texts={"d1": TEXTS["d1"]})
    for user in (project.owner, make_user()):
        annotator = services.annotator_for_user(project=project, user=user)
        task = services.task_next(annotator=annotator)
        text = task.document.text
        services.task_save(
            task=task,
            revision=0,
            mentions=[
                mention(text, "Orla", entity="e1"),
                mention(text, "Dunmore", "LOCATION", identifier_type="QUASI", entity="e2"),
            ],
        )
        services.task_submit(task=task)
    (document,) = project_gold(project=project)
    assert len(document.annotations) == 2
    ids = [m.entity_id for layer in document.annotations.values() for m in layer]
    assert len(set(ids)) == 4
    # "Dunmore" sits before an emoji; the offsets are code points.
    dunmore = next(
        m for m in next(iter(document.annotations.values())) if m.entity_type == "LOCATION"
    )
    assert TEXTS["d1"][dunmore.start : dunmore.end] == "Dunmore"


def test_others_work_is_shown_only_when_the_owner_allows_and_without_names(fake_anonymizer):
    project = make_project(texts={"d1": TEXTS["d1"]})
    writer = services.annotator_for_user(project=project, user=make_user(username="alicework"))
    task = services.task_next(annotator=writer)
    services.task_save(task=task, revision=0, mentions=[mention(task.document.text, "Orla")])
    services.task_submit(task=task)
    (reader,) = crowd(project, 1)
    own = services.task_next(annotator=reader)
    assert task_state(task=own)["others"] == []
    project.show_others_work = True
    project.save()
    own.refresh_from_db()
    others = task_state(task=own)["others"]
    assert others[0]["annotator"] == "annotator 1" and len(others[0]["mentions"]) == 1
    assert "alicework" not in str(others)


def test_import_creates_layers_and_refuses_unknown_categories(fake_anonymizer):
    project = make_project(texts={})
    layer = [LibraryMention(16, 20, "PERSON_FIRSTNAME", "x_e1", "DIRECT")]
    counts = services.annotations_import(
        project=project, documents=[AnnotatedDocument("x", TEXTS["d1"], {"textwash": layer})]
    )
    assert counts["documents_created"] == 1 and counts["layers"] == 1
    assert Annotator.objects.get(project=project, name="textwash").tasks.get().status == "submitted"
    bad = [LibraryMention(16, 20, "PERSON", "x_e1", "DIRECT")]
    with pytest.raises(ValidationError, match="not in the project's scheme"):
        services.annotations_import(
            project=project, documents=[AnnotatedDocument("y", "Orla", {"a": bad})]
        )


def test_custom_schemes_need_categories():
    with pytest.raises(ValidationError, match="custom scheme"):
        services.project_create(owner=make_user(), slug="c", title="c", scheme="custom")
    project = services.project_create(
        owner=make_user(),
        slug="c2",
        title="c",
        scheme="custom",
        custom_categories=["pet name", "Ship"],
    )
    assert project.categories == ["PET_NAME", "SHIP"]

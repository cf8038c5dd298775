"""Adjudication: two annotators' layers merge into a gold layer, disagreements listed."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from anonymize.annotations.schema import AnnotatedDocument
from anonymize.annotations.schema import Mention as M
from intruder.annotation import services
from intruder.annotation.adjudication import (
    GOLD_LAYER,
    adjudication_compare,
    adjudication_merge,
)
from intruder.annotation.exports import export_bytes
from intruder.annotation.models import Annotator
from intruder.annotation.selectors import project_gold
from tests.intruder.factories import make_user

pytestmark = pytest.mark.django_db

TEXT = "Orla Brennick is a nurse in Dunmore who sails on Sundays."


def two_layers(owner=None):
    """Return a project where anna and ben annotated TEXT differently."""
    owner = owner or make_user(username="lead", password="lead-pw-123")
    project = services.project_create(
        owner=owner, slug="adj", title="Adjudication", scheme="textwash", pre_annotate=False
    )
    anna = [
        M(0, 4, "PERSON_FIRSTNAME", "e1"),  # agreed
        M(19, 24, "OCCUPATION", "e2"),  # category clash with ben
        M(28, 35, "LOCATION", "e3"),  # only anna
    ]
    ben = [
        M(0, 4, "PERSON_FIRSTNAME", "e1"),
        M(19, 24, "OTHER_IDENTIFYING_ATTRIBUTE", "e2"),
        M(5, 13, "PERSON_LASTNAME", "e4"),  # only ben
        M(40, 45, "OTHER_IDENTIFYING_ATTRIBUTE", "e5"),  # only ben
    ]
    services.annotations_import(
        project=project,
        documents=[AnnotatedDocument("t1", TEXT, annotations={"anna": anna, "ben": ben})],
    )
    a = Annotator.objects.get(project=project, name="anna")
    b = Annotator.objects.get(project=project, name="ben")
    return project, a, b


def test_compare_lists_every_disagreement_and_the_agreed_spans():
    project, anna, ben = two_layers()
    comparison = adjudication_compare(project=project, first=anna, second=ben)
    assert comparison.documents == 1
    assert [(m.start, m.end) for m in comparison.agreed] == [(0, 4)]
    listed = [(d.text, d.kind) for d in comparison.disagreements]
    assert listed == [
        ("Brennick", "only B"),
        ("nurse", "category"),
        ("Dunmore", "only A"),
        ("sails", "only B"),
    ]
    nurse = comparison.disagreements[1]
    assert nurse.a_text == "“nurse” OCCUPATION"
    assert nurse.b_text == "“nurse” OTHER_IDENTIFYING_ATTRIBUTE"


def test_merge_writes_the_gold_layer_from_the_choices_and_exports_it():
    project, anna, ben = two_layers()
    comparison = adjudication_compare(project=project, first=anna, second=ben)
    keys = [d.key for d in comparison.disagreements]
    choices = dict(zip(keys, ["b", "a", "neither", "b"], strict=True))
    counts = adjudication_merge(project=project, first=anna, second=ben, choices=choices)
    assert counts == {"documents": 1, "mentions": 4, "disagreements": 4}
    gold = Annotator.objects.get(project=project, name=GOLD_LAYER)
    spans = [(TEXT[m.start : m.end], m.entity_type) for m in gold.tasks.get().mentions.all()]
    assert spans == [
        ("Orla", "PERSON_FIRSTNAME"),
        ("Brennick", "PERSON_LASTNAME"),
        ("nurse", "OCCUPATION"),
        ("sails", "OTHER_IDENTIFYING_ATTRIBUTE"),
    ]
    # Exported as its own layer, left out of agreement and evaluation.
    (exported,) = json.loads(export_bytes(project=project, fmt="tab"))
    assert set(exported["annotations"]) == {"anna", "ben", GOLD_LAYER}
    (independent,) = project_gold(project=project, include_adjudicated=False)
    assert set(independent.annotations) == {"anna", "ben"}
    # Running it again replaces the gold layer, never duplicates it.
    choices = dict.fromkeys(choices, "neither")
    adjudication_merge(project=project, first=anna, second=ben, choices=choices)
    assert [m.entity_type for m in gold.tasks.get().mentions.all()] == ["PERSON_FIRSTNAME"]


def test_merge_refuses_undecided_disagreements_and_the_same_annotator_twice():
    project, anna, ben = two_layers()
    with pytest.raises(ValidationError, match="4 disagreement"):
        adjudication_merge(project=project, first=anna, second=ben, choices={})
    with pytest.raises(ValidationError, match="two different"):
        adjudication_compare(project=project, first=anna, second=anna)
    assert not Annotator.objects.filter(name=GOLD_LAYER).exists()


def test_adjudication_page_needs_a_manager(client):
    project, _, _ = two_layers()
    url = reverse("annotation-adjudicate", args=[project.slug])
    stranger = make_user(username="stranger", password="stranger-pw-1")
    client.force_login(stranger)
    assert client.get(url).status_code == 404
    client.force_login(project.owner)
    page = client.get(url)
    assert page.status_code == 200
    assert "4 disagreements" in page.content.decode()

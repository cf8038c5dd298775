"""Fixtures for the annotation app: projects with documents and a fake anonymizer."""

from __future__ import annotations

import pytest

from anonymize.annotations.schema import AnnotatedDocument
from intruder.annotation import services
from intruder.services import anonymization
from tests.intruder.factories import make_user
from tests.intruder.fake_anonymizer import FakeAnonymizer

TEXTS = {
    "d1": "Yesterday I met Orla Brennick in Dunmore 🏔 and later Orla went home.",
    "d2": "The baker, Quentin Asplund, opened a shop near Harrowgate in 2001.",
    "d3": "She worked for Velloria Shipping until her friend Saoirse moved away.",
}


@pytest.fixture
def fake_anonymizer():
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    yield
    anonymization.set_anonymizer(previous)


def make_project(*, owner=None, texts=TEXTS, suggest=True, **settings):
    owner = owner or make_user()
    settings.setdefault("annotators_per_text", 2)
    settings.setdefault("is_open", True)  # projects start closed; these tests enrol a crowd
    project = services.project_create(
        owner=owner,
        slug=settings.pop("slug", f"p-{owner.pk}"),
        title="Test project",
        scheme=settings.pop("scheme", "textwash"),
        **settings,
    )
    services.documents_add(
        project=project, documents=[AnnotatedDocument(k, v) for k, v in texts.items()]
    )
    if suggest:
        services.suggestions_compute(project=project)
    return project


def mention(text: str, value: str, category: str = "PERSON_FIRSTNAME", **extra) -> dict:
    start = text.index(value)
    return {
        "start": start,
        "end": start + len(value),
        "entity_type": category,
        "identifier_type": extra.pop("identifier_type", "DIRECT"),
        "confidential_status": "NOT_CONFIDENTIAL",
        "entity": extra.pop("entity", value),
        "suggestion": extra.pop("suggestion", None),
    }

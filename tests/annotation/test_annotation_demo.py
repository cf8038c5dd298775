"""The demo annotation project shows agreement and evaluation numbers straight away."""

from __future__ import annotations

import pytest

from anonymize.annotations.agreement import project_agreement
from intruder.annotation.demo import SLUG
from intruder.annotation.evaluation import evaluate_project
from intruder.annotation.models import Project
from intruder.annotation.selectors import project_gold
from intruder.demo import load_demo

pytestmark = pytest.mark.django_db


@pytest.mark.slow  # the demo project's agreement and evaluation: the slowest quick-loop test
def test_demo_annotation_project_has_two_annotators_and_real_numbers(fake_anonymizer):
    # No attack runs: they load the real encoder and take most of a minute; the annotation
    # project does not depend on them (tests/intruder/researcher/test_demo.py runs them).
    load_demo(attacks=False)
    project = Project.objects.get(slug=SLUG)
    assert project.documents.count() == 30
    assert all(d.suggestions for d in project.documents.all())
    gold = project_gold(project=project)
    assert len(gold) == 30 and all(set(d.annotations) == {"demo-anna", "demo-ben"} for d in gold)
    agreement = project_agreement(gold)
    kappa = agreement["measures"]["entity_type"]["span"]["exact"]["fleiss_kappa"]
    assert kappa is not None and 0 < kappa <= 1
    metrics = evaluate_project(project=project, system="model").metrics
    assert 0 < metrics["token_recall"] <= 1 and 0 < metrics["token_precision"] <= 1
    load_demo(attacks=False)  # idempotent: nothing doubles
    assert project.annotators.count() == 2 and project.documents.count() == 30

"""The project form takes its ranges from the model, so a 0 is refused beside its field.

Before, the model had only the database's check constraints: the form let 0 through and
the page showed 'Constraint “annotation_annotators_positive” is violated.'
"""

from __future__ import annotations

import pytest
from django.db.models import CheckConstraint, Q

from intruder.annotation.models import Project
from intruder.annotation.views import ProjectForm
from intruder.models import Study
from intruder.web.model_bounds import field_bounds

pytestmark = pytest.mark.django_db

PROJECT_FORM = {
    "title": "Harbour",
    "slug": "harbour",
    "scheme": "tab",
    "annotators_per_text": 2,
    "texts_per_annotator": 10,
    "task_time_limit_minutes": 60,
}


@pytest.mark.parametrize("name", ["annotators_per_text", "texts_per_annotator"])
def test_a_zero_is_refused_beside_its_field_without_the_constraint_name(name: str) -> None:
    form = ProjectForm(data={**PROJECT_FORM, name: 0})
    assert not form.is_valid()
    assert form.fields[name].min_value == 1
    assert name in form.errors and "__all__" not in form.errors
    assert "annotation_" not in str(form.errors)


def test_the_project_form_accepts_the_smallest_allowed_values() -> None:
    form = ProjectForm(data={**PROJECT_FORM, "annotators_per_text": 1, "texts_per_annotator": 1})
    assert form.is_valid(), form.errors


@pytest.mark.parametrize("model", [Study, Project])
def test_every_one_field_check_constraint_has_the_validators_a_form_reads(model) -> None:
    """A range only in the database reaches the page as a constraint's internal name."""
    checks = [c for c in model._meta.constraints if isinstance(c, CheckConstraint)]
    assert checks
    for check in checks:
        (name,) = condition_fields(check.condition)  # one field each
        assert field_bounds(model._meta.get_field(name)), check.name


def condition_fields(condition: Q) -> set[str]:
    """Return the model fields a constraint's condition looks at (`a__gte=1` -> "a")."""
    names: set[str] = set()
    for child in condition.children:
        if isinstance(child, Q):
            names |= condition_fields(child)
        else:
            names.add(child[0].split("__")[0])
    return names

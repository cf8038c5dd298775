"""Form fields and constraint messages read off the model, so forms cannot drift from it.

A model field's range lives in its validators (and a `CheckConstraint` repeats it in the
database); a form that spells the range again drifts (`StudyForm` once allowed 1000 texts
per intruder where the model allowed 200, and mapped constraints renamed in migration 0005).
Here the form takes the bounds from the validators and the constraint names from
`Meta.constraints`: the model stays the one home of both.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import CheckConstraint, Q


def field_bounds(model_field: models.Field) -> dict[str, Any]:
    """Return the `min_value`/`max_value` that the field's validators enforce (those it has)."""
    # `validators` also holds the database's integer range where no stricter validator is
    # given: the strictest of each kind wins.
    lows = [v.limit_value for v in model_field.validators if isinstance(v, MinValueValidator)]
    highs = [v.limit_value for v in model_field.validators if isinstance(v, MaxValueValidator)]
    bounds: dict[str, Any] = {}
    if lows:
        bounds["min_value"] = max(lows)
    if highs:
        bounds["max_value"] = min(highs)
    return bounds


def bounded_formfield(model_field: models.Field, **kwargs: Any) -> forms.Field | None:
    """Return the model field's form field with the model's range (a `formfield_callback`)."""
    if isinstance(model_field, models.IntegerField | models.FloatField):
        kwargs = {**field_bounds(model_field), **kwargs}
    return model_field.formfield(**kwargs)


def _condition_fields(condition: Q) -> set[str]:
    """Return the model fields a constraint's condition looks at (`a__gte=1` -> "a")."""
    names: set[str] = set()
    for child in condition.children:
        if isinstance(child, Q):
            names |= _condition_fields(child)
        else:
            names.add(child[0].split("__")[0])
    return names


def range_message(bounds: dict[str, Any]) -> str:
    """Return the plain-words rule of a range, as a form error says it."""
    low, high = bounds.get("min_value"), bounds.get("max_value")
    if low is not None and high is not None:
        return f"Enter a number from {low:g} to {high:g}."
    if low is not None:
        return f"Enter {low:g} or more."
    return f"Enter {high:g} or less."


def constraint_fields(model: type[models.Model]) -> dict[str, tuple[str, str]]:
    """Return constraint name -> (field, message) for each one-field check of the model.

    The database refuses what a form let through under the constraint's internal name; the
    form shows the message beside the field instead. Names come from `Meta.constraints`, so
    a renamed constraint is renamed here too.
    """
    mapped: dict[str, tuple[str, str]] = {}
    for constraint in model._meta.constraints:
        if not isinstance(constraint, CheckConstraint):
            continue
        fields = _condition_fields(constraint.condition)
        if len(fields) != 1:
            continue
        (name,) = fields
        bounds = field_bounds(model._meta.get_field(name))
        if bounds:
            mapped[constraint.name] = (name, range_message(bounds))
    return mapped

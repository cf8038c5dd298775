"""Form fields read off the model, so forms cannot drift from it.

A model field's range lives in its validators (and a `CheckConstraint` repeats it in the
database); a form that spells the range again drifts (`StudyForm` once allowed 1000 texts
per intruder where the model allowed 200). Here the form takes the bounds from the
validators, so a value the database would refuse is refused beside its field first.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


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

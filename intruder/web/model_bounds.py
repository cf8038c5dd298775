"""Form fields read off the model, so forms cannot drift from it.

A model field's range lives in its validators (made from `intruder.bounds`, and a
`CheckConstraint` repeats it in the database); a form that spells the range again drifts
(`StudyForm` once allowed 1000 texts per intruder where the model allowed 200). Here the form
takes the bounds from the validators, with their message, so a value the database would
refuse is refused beside its field first, in the words the API and the services use.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


def field_bounds(model_field: models.Field) -> dict[str, Any]:
    """Return the `min_value`/`max_value` that the field's validators enforce (those it has),
    and their messages as the form field's `error_messages`."""
    # `validators` also holds the database's integer range where no stricter validator is
    # given: the strictest of each kind wins.
    bounds: dict[str, Any] = {}
    messages: dict[str, Any] = {}
    for key, kind, strictest in (
        ("min_value", MinValueValidator, max),
        ("max_value", MaxValueValidator, min),
    ):
        found = [v for v in model_field.validators if isinstance(v, kind)]
        if found:
            chosen = strictest(found, key=lambda v: v.limit_value)
            bounds[key] = chosen.limit_value
            messages[key] = chosen.message
    if messages:
        bounds["error_messages"] = messages
    return bounds


def bounded_formfield(model_field: models.Field, **kwargs: Any) -> forms.Field | None:
    """Return the model field's form field with the model's range (a `formfield_callback`)."""
    if isinstance(model_field, models.IntegerField | models.FloatField):
        kwargs = {**field_bounds(model_field), **kwargs}
    return model_field.formfield(**kwargs)

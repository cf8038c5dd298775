"""What every management command (the app's and the annotation app's) shares: the row a slug
argument names, or a clear stop."""

from __future__ import annotations

from typing import TypeVar

from django.core.management.base import CommandError
from django.db.models import Model

M = TypeVar("M", bound=Model)


def by_slug(model: type[M], slug: str, what: str) -> M:
    """Return the `model` row with `slug`; stop the command naming `what` when none has it."""
    found = model._default_manager.filter(slug=slug).first()
    if found is None:
        raise CommandError(f"no {what} with slug {slug!r}")
    return found

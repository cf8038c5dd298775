"""Row counts grouped by one field: the figures status tables and progress bars show."""

from __future__ import annotations

from django.db.models import Count, QuerySet


def count_by(queryset: QuerySet, field: str) -> dict[str, int]:
    """Return {value: number of rows} of one field (the model's ordering is dropped first,
    so that it cannot split the groups)."""
    rows = queryset.order_by().values(field).annotate(n=Count("id")).values_list(field, "n")
    return dict(rows)

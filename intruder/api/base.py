"""Building blocks shared by the API's endpoints."""

from __future__ import annotations

from django.db.models import QuerySet
from rest_framework import generics

from intruder.api.access import studies_visible_to


class StudyScopedQuerysetMixin:
    """Limit an endpoint's rows to the studies the user may see (others are 404 or absent).

    `study_lookup` leads from a row to its study; `base_queryset` holds every row.
    """

    study_lookup = "study"
    base_queryset: QuerySet

    def get_queryset(self) -> QuerySet:
        visible = studies_visible_to(self.request.user)
        return self.base_queryset.filter(**{f"{self.study_lookup}__in": visible})


class StudyScopedListApi(StudyScopedQuerysetMixin, generics.ListAPIView):
    """List rows of the studies the user may see."""


class StudyScopedDetailApi(StudyScopedQuerysetMixin, generics.RetrieveAPIView):
    """Show one row of a study the user may see; rows of other studies are 404."""

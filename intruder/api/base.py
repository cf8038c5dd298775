"""Building blocks shared by the API's endpoints."""

from __future__ import annotations

from django.db.models import QuerySet
from rest_framework import generics

from intruder.api.access import studies_visible_to


class StudyScopedListApi(generics.ListAPIView):
    """List rows of the studies the user may see; `study_lookup` leads from a row to its study."""

    study_lookup = "study"
    base_queryset: QuerySet

    def get_queryset(self) -> QuerySet:
        visible = studies_visible_to(self.request.user)
        return self.base_queryset.filter(**{f"{self.study_lookup}__in": visible})


class StudyScopedDetailApi(generics.RetrieveAPIView):
    """Show one row of a study the user may see; rows of other studies are 404."""

    study_lookup = "study"
    base_queryset: QuerySet

    def get_queryset(self) -> QuerySet:
        visible = studies_visible_to(self.request.user)
        return self.base_queryset.filter(**{f"{self.study_lookup}__in": visible})

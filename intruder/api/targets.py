"""Target persons: list and detail (read-only: pools are imported on the researcher pages)."""

from __future__ import annotations

from rest_framework import serializers

from intruder.api.base import StudyScopedDetailApi, StudyScopedListApi
from intruder.api.filters import TargetFilter
from intruder.models import TargetPerson


class TargetListApi(StudyScopedListApi):
    """List the target persons of the user's studies."""

    class OutputSerializer(serializers.ModelSerializer):
        class Meta:
            model = TargetPerson
            ref_name = "Target"
            fields = ["id", "study", "key", "name", "aliases", "group", "wikipedia_url", "profile"]

    base_queryset = TargetPerson.objects.all()
    filterset_class = TargetFilter
    ordering_fields = ["id", "key", "group", "name"]
    serializer_class = OutputSerializer


class TargetDetailApi(StudyScopedDetailApi):
    """Show one target person."""

    base_queryset = TargetPerson.objects.all()
    serializer_class = TargetListApi.OutputSerializer

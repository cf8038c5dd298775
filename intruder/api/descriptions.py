"""Descriptions (original texts, researchers only): list and detail."""

from __future__ import annotations

from rest_framework import serializers

from intruder.api.base import StudyScopedDetailApi, StudyScopedListApi
from intruder.api.filters import DescriptionFilter
from intruder.models import Description


class DescriptionListApi(StudyScopedListApi):
    """List the descriptions of the user's studies, with their target's key and group."""

    class OutputSerializer(serializers.ModelSerializer):
        target_key = serializers.CharField(source="target.key", read_only=True)
        group = serializers.CharField(source="target.group", read_only=True)
        writer_prolific_pid = serializers.CharField(
            source="writer.prolific_pid", read_only=True, default=None
        )

        class Meta:
            model = Description
            ref_name = "Description"
            fields = [
                "id",
                "study",
                "target",
                "target_key",
                "group",
                "writer",
                "writer_prolific_pid",
                "external_id",
                "text",
                "created_at",
            ]

    base_queryset = Description.objects.select_related("target", "writer")
    filterset_class = DescriptionFilter
    ordering_fields = ["id", "created_at", "external_id"]
    serializer_class = OutputSerializer


class DescriptionDetailApi(StudyScopedDetailApi):
    """Show one description."""

    base_queryset = Description.objects.select_related("target", "writer")
    serializer_class = DescriptionListApi.OutputSerializer

"""Studies: list and detail with the user's role and live progress."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema_field
from rest_framework import generics, serializers

from intruder.api.access import studies_visible_to, study_role
from intruder.api.filters import StudyFilter
from intruder.api.progress import study_progress
from intruder.models import Study

STUDY_FIELDS = [
    "id",
    "slug",
    "title",
    "kind",
    "owner",
    "items_per_participant",
    "judgments_per_text",
    "min_description_chars",
    "groups",
    "consent_text",
    "instructions_text",
    "debrief_text",
    "completion_code",
    "time_limit_minutes",
    "identification_threshold",
    "is_open",
    "created_at",
    "updated_at",
]


class StudyListApi(generics.ListAPIView):
    """List the studies the user owns or is a member of (all of them for a superuser)."""

    class OutputSerializer(serializers.ModelSerializer):
        role = serializers.SerializerMethodField(help_text="'owner', 'editor', 'viewer', ...")

        class Meta:
            model = Study
            ref_name = "Study"
            fields = [*STUDY_FIELDS, "role"]

        def get_role(self, obj: Study) -> str | None:
            return study_role(self.context["request"].user, obj)

    filterset_class = StudyFilter
    ordering_fields = ["id", "created_at", "title"]
    serializer_class = OutputSerializer

    def get_queryset(self) -> QuerySet[Study]:
        return studies_visible_to(self.request.user)


class StudyDetailApi(generics.RetrieveAPIView):
    """Show one study with its progress: descriptions, judgments per text, participants."""

    class OutputSerializer(StudyListApi.OutputSerializer):
        progress = serializers.SerializerMethodField()

        class Meta(StudyListApi.OutputSerializer.Meta):
            ref_name = "StudyDetail"
            fields = [*StudyListApi.OutputSerializer.Meta.fields, "progress"]

        @extend_schema_field(serializers.DictField())
        def get_progress(self, obj: Study) -> dict[str, Any]:
            return study_progress(study=obj)

    serializer_class = OutputSerializer

    def get_queryset(self) -> QuerySet[Study]:
        return studies_visible_to(self.request.user)

"""Judgments of intruders with their scores (list and detail), and their familiarity answers."""

from __future__ import annotations

import django_filters as filters
from rest_framework import serializers

from intruder.api.base import StudyScopedDetailApi, StudyScopedListApi
from intruder.api.filters import IdFilter, JudgmentFilter
from intruder.models import FamiliarityAnswer, Judgment


class JudgmentListApi(StudyScopedListApi):
    """List the judgments made in the user's studies."""

    class OutputSerializer(serializers.ModelSerializer):
        study = serializers.IntegerField(source="participant.study_id", read_only=True)
        prolific_pid = serializers.CharField(source="participant.prolific_pid", read_only=True)
        description = serializers.IntegerField(source="text.description_id", read_only=True)
        target_key = serializers.CharField(source="text.description.target.key", read_only=True)
        group = serializers.CharField(source="text.description.target.group", read_only=True)
        position = serializers.IntegerField(source="assignment.position", read_only=True)
        other_person_key = serializers.CharField(
            source="other_person.key",
            read_only=True,
            allow_null=True,
            help_text="The other person of the study the guess matches best.",
        )

        class Meta:
            model = Judgment
            ref_name = "Judgment"
            fields = [
                "id",
                "study",
                "participant",
                "prolific_pid",
                "text",
                "description",
                "target_key",
                "group",
                "position",
                "self_identified",
                "guessed_name",
                "revealing_text",
                "other_knowledge",
                "time_spent_ms",
                "created_at",
                "cosine",
                "identified",
                "matched_alias",
                "token_set_ratio",
                "surname_match",
                "named_other",
                "other_person_key",
                "other_cosine",
            ]

    study_lookup = "participant__study"
    base_queryset = Judgment.objects.select_related(
        "participant", "assignment", "text__description__target", "other_person"
    )
    filterset_class = JudgmentFilter
    ordering_fields = ["id", "created_at", "cosine", "time_spent_ms"]
    serializer_class = OutputSerializer


class JudgmentDetailApi(StudyScopedDetailApi):
    """Show one judgment."""

    study_lookup = "participant__study"
    base_queryset = JudgmentListApi.base_queryset
    serializer_class = JudgmentListApi.OutputSerializer


class FamiliarityAnswerFilter(filters.FilterSet):
    study = IdFilter(field_name="participant__study_id")
    participant = IdFilter(field_name="participant_id")
    target = IdFilter(field_name="target_id")
    heard_of = filters.BooleanFilter()

    class Meta:
        model = FamiliarityAnswer
        fields = ["study", "participant", "target", "heard_of"]


class FamiliarityAnswerListApi(StudyScopedListApi):
    """List the debrief's familiarity answers: had the intruder heard of this famous person?"""

    class OutputSerializer(serializers.ModelSerializer):
        study = serializers.IntegerField(source="participant.study_id", read_only=True)
        target_key = serializers.CharField(source="target.key", read_only=True)

        class Meta:
            model = FamiliarityAnswer
            ref_name = "FamiliarityAnswer"
            fields = [
                "id",
                "study",
                "participant",
                "target",
                "target_key",
                "heard_of",
                "simulated",
                "created_at",
            ]

    study_lookup = "participant__study"
    base_queryset = FamiliarityAnswer.objects.select_related("participant", "target")
    filterset_class = FamiliarityAnswerFilter
    ordering_fields = ["id", "created_at"]
    serializer_class = OutputSerializer

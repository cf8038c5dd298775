"""Participants: list and detail. The session token is never part of any response."""

from __future__ import annotations

from rest_framework import serializers

from intruder.api.base import StudyScopedDetailApi, StudyScopedListApi
from intruder.api.filters import ParticipantFilter
from intruder.models import Participant


class ParticipantListApi(StudyScopedListApi):
    """List the participants of the user's studies."""

    class OutputSerializer(serializers.ModelSerializer):
        class Meta:
            model = Participant
            ref_name = "Participant"
            # Not `token`: it is the participant's session credential.
            fields = [
                "id",
                "study",
                "prolific_pid",
                "prolific_study_id",
                "prolific_session_id",
                "status",
                "group",
                "consented_at",
                "instructions_seen_at",
                "started_at",
                "last_seen_at",
                "completed_at",
            ]

    base_queryset = Participant.objects.all()
    filterset_class = ParticipantFilter
    ordering_fields = ["id", "started_at", "completed_at", "status"]
    serializer_class = OutputSerializer


class ParticipantDetailApi(StudyScopedDetailApi):
    """Show one participant."""

    base_queryset = Participant.objects.all()
    serializer_class = ParticipantListApi.OutputSerializer

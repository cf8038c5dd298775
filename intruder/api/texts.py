"""Anonymized texts: list, detail, span edits and status changes (release/withdraw).

Edits go through `intruder.services.anonymization`, the same services as the review pages:
optimistic locking on `revision` (a stale edit is 409 and changes nothing) and span checks
against the original.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from intruder.api.access import can_edit_study, studies_visible_to
from intruder.api.base import StudyScopedDetailApi, StudyScopedListApi
from intruder.api.filters import AnonymizedTextFilter
from intruder.models import AnonymizedText
from intruder.selectors.leak_checks import leak_warnings
from intruder.services import review


class SpanSerializer(serializers.Serializer):
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=1)
    category = serializers.CharField()
    text = serializers.CharField(required=False, allow_blank=True)
    placeholder = serializers.CharField(required=False, allow_blank=True)
    score = serializers.FloatField(required=False, allow_null=True)

    class Meta:
        ref_name = "Span"


class AnonymizedTextListApi(StudyScopedListApi):
    """List the anonymized texts of the user's studies."""

    class OutputSerializer(serializers.ModelSerializer):
        study = serializers.IntegerField(source="description.study_id", read_only=True)
        target_key = serializers.CharField(source="description.target.key", read_only=True)
        group = serializers.CharField(source="description.target.group", read_only=True)
        spans = SpanSerializer(many=True, read_only=True)
        leak_warnings = serializers.SerializerMethodField()

        class Meta:
            model = AnonymizedText
            ref_name = "AnonymizedText"
            fields = [
                "id",
                "study",
                "description",
                "target_key",
                "group",
                "method",
                "model_version",
                "text",
                "spans",
                "status",
                "revision",
                "reviewed_by",
                "reviewed_at",
                "leak_warnings",
                "created_at",
                "updated_at",
            ]

        def get_leak_warnings(self, obj: AnonymizedText) -> list[str]:
            return leak_warnings(obj)

    study_lookup = "description__study"
    base_queryset = AnonymizedText.objects.select_related("description__target")
    filterset_class = AnonymizedTextFilter
    ordering_fields = ["id", "updated_at", "status"]
    serializer_class = OutputSerializer


class AnonymizedTextDetailApi(StudyScopedDetailApi):
    """Show one anonymized text."""

    study_lookup = "description__study"
    base_queryset = AnonymizedTextListApi.base_queryset
    serializer_class = AnonymizedTextListApi.OutputSerializer


def _text_for_editing(request: Request, pk: int) -> AnonymizedText:
    """Return the text if the user may edit it: 404 if its study is invisible, else 403."""
    text = get_object_or_404(
        AnonymizedTextListApi.base_queryset.filter(
            description__study__in=studies_visible_to(request.user)
        ),
        pk=pk,
    )
    if not can_edit_study(request.user, text.description.study):
        raise PermissionDenied("viewers cannot edit anonymized texts")
    return text


class AnonymizedTextSpansUpdateApi(APIView):
    """Replace the spans of a draft or withdrawn text; its text is re-rendered from them."""

    class InputSerializer(serializers.Serializer):
        expected_revision = serializers.IntegerField(
            min_value=1, help_text="The revision the edit was made on; a stale one is 409."
        )
        spans = SpanSerializer(many=True)

        class Meta:
            ref_name = "AnonymizedTextSpansInput"

    @extend_schema(
        request=InputSerializer,
        responses={200: AnonymizedTextListApi.OutputSerializer},
        operation_id="anonymized_texts_spans_update",
    )
    def put(self, request: Request, pk: int) -> Response:
        text = _text_for_editing(request, pk)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        text = review.anonymized_text_set_spans(
            text=text,
            spans=data.validated_data["spans"],
            expected_revision=data.validated_data["expected_revision"],
            user=request.user,
        )
        return Response(AnonymizedTextListApi.OutputSerializer(text).data)


class AnonymizedTextStatusUpdateApi(APIView):
    """Release a draft, withdraw a released text, or reopen a withdrawn one as a draft."""

    class InputSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=AnonymizedText.Status.choices)
        expected_revision = serializers.IntegerField(min_value=1, required=False)

        class Meta:
            ref_name = "AnonymizedTextStatusInput"

    @extend_schema(
        request=InputSerializer,
        responses={200: AnonymizedTextListApi.OutputSerializer},
        operation_id="anonymized_texts_status_update",
    )
    def post(self, request: Request, pk: int) -> Response:
        text = _text_for_editing(request, pk)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        text = review.anonymized_text_set_status(
            text=text,
            status=data.validated_data["status"],
            expected_revision=data.validated_data.get("expected_revision"),
            user=request.user,
        )
        return Response(AnonymizedTextListApi.OutputSerializer(text).data)

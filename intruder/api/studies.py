"""Studies: list and detail with the user's role and live progress; create and update.

Writes go through `intruder.services.studies`, the same services as the researcher pages.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from intruder.api.access import can_edit_study, studies_visible_to, study_role
from intruder.api.filters import StudyFilter
from intruder.models import PersonGroup, Study
from intruder.selectors.monitoring import study_progress
from intruder.services.sources import descriptions_take_from_sources, study_sources_set
from intruder.services.studies import EDITABLE_FIELDS, study_create, study_update
from intruder.web.model_bounds import field_bounds

STUDY_FIELDS = [
    "id",
    "slug",
    "owner",
    *EDITABLE_FIELDS,
    "source_studies",
    "archived_at",
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
            return study_progress(obj)

    serializer_class = OutputSerializer

    def get_queryset(self) -> QuerySet[Study]:
        return studies_visible_to(self.request.user)


class StudySettingsInputSerializer(serializers.ModelSerializer):
    """Study settings a researcher may set; every one optional (defaults as on the model).

    A model serializer, so that the ranges come from the model fields' validators (the same
    ones the researcher form and the database check).
    """

    groups = serializers.ListField(
        child=serializers.ChoiceField(choices=PersonGroup.choices), required=False
    )
    source_studies = serializers.ListField(
        # Ids within a 64-bit key: a larger one is a 400, not the database's overflow.
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        required=False,
        help_text="Ids of the collection studies whose descriptions an intruder test takes.",
    )

    class Meta:
        model = Study
        fields = [*EDITABLE_FIELDS, "source_studies"]
        extra_kwargs = {
            # The ranges and their one message from the model's validators (`intruder.bounds`).
            **{
                name: {"required": False, **field_bounds(Study._meta.get_field(name))}
                for name in EDITABLE_FIELDS
            },
            # The field's own checks only: whether the ID is free is the service's to say,
            # since only it knows the study being updated (its own unchanged ID is fine).
            "prolific_study_id": {
                "required": False,
                "validators": Study._meta.get_field("prolific_study_id").validators,
            },
        }


def _with_sources(request: Request, data: dict[str, Any], write: Any) -> Study:
    """Run `write(**settings)` and set the study's source studies, all or nothing."""
    ids = data.pop("source_studies", None)
    sources = None
    if ids is not None:
        visible = studies_visible_to(request.user).filter(pk__in=ids)
        if visible.count() != len(set(ids)):
            raise ValidationError({"source_studies": ["no such study among yours"]})
        sources = list(visible)
    with transaction.atomic():
        study = write(**data)
        if sources is not None:
            study_sources_set(study=study, sources=sources)
    return study


class StudyCreateApi(APIView):
    """Create a study owned by the caller."""

    class InputSerializer(StudySettingsInputSerializer):
        slug = serializers.SlugField(max_length=50)
        title = serializers.CharField(max_length=200)
        kind = serializers.ChoiceField(choices=Study.Kind.choices)

        class Meta(StudySettingsInputSerializer.Meta):
            ref_name = "StudyCreateInput"
            fields = ["slug", *EDITABLE_FIELDS, "source_studies"]

    @extend_schema(
        request=InputSerializer,
        responses={201: StudyDetailApi.OutputSerializer},
        operation_id="studies_create",
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        study = _with_sources(
            request,
            dict(data.validated_data),
            lambda **settings: study_create(owner=request.user, **settings),
        )
        output = StudyDetailApi.OutputSerializer(study, context={"request": request})
        return Response(output.data, status=status.HTTP_201_CREATED)


class StudyUpdateApi(APIView):
    """Change some settings of a study (owner and editors; slug and owner stay)."""

    class InputSerializer(StudySettingsInputSerializer):
        class Meta(StudySettingsInputSerializer.Meta):
            ref_name = "StudyUpdateInput"

    @extend_schema(
        request=InputSerializer,
        responses={200: StudyDetailApi.OutputSerializer},
        operation_id="studies_update",
    )
    def patch(self, request: Request, pk: int) -> Response:
        study = get_object_or_404(studies_visible_to(request.user), pk=pk)
        if not can_edit_study(request.user, study):
            raise PermissionDenied("viewers cannot change a study")
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        study = _with_sources(
            request,
            dict(data.validated_data),
            lambda **changes: study_update(study=study, **changes),
        )
        output = StudyDetailApi.OutputSerializer(study, context={"request": request})
        return Response(output.data)


class StudyTakeApi(APIView):
    """Copy the source collection studies' new descriptions (and targets) into the study."""

    class OutputSerializer(serializers.Serializer):
        descriptions_created = serializers.IntegerField()
        targets_created = serializers.IntegerField()
        targets_reused = serializers.IntegerField()

    @extend_schema(request=None, responses={200: OutputSerializer}, operation_id="studies_take")
    def post(self, request: Request, pk: int) -> Response:
        study = get_object_or_404(studies_visible_to(request.user), pk=pk)
        if not can_edit_study(request.user, study):
            raise PermissionDenied("viewers cannot change a study")
        tally = descriptions_take_from_sources(study=study)
        return Response(self.OutputSerializer(tally.as_dict()).data)

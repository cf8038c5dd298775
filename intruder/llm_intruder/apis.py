"""LLM jobs of a study over the API: anonymize with a paper-002 prompt, run the open-world
LLM intruder, read its results. The endpoint is the server's (environment), never a field."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from intruder.api.access import can_edit_study, studies_visible_to
from intruder.llm_intruder import services as llm_jobs
from intruder.llm_intruder.selectors import llm_prompt_choices, open_world_llm_results
from intruder.models import Study


class JobQueuedSerializer(serializers.Serializer):
    job = serializers.IntegerField()
    kind = serializers.CharField()


def _editable_study(request: Request, pk: int) -> Study:
    study = get_object_or_404(studies_visible_to(request.user), pk=pk)
    if not can_edit_study(request.user, study):
        raise PermissionDenied("viewers cannot start jobs")
    return study


class StudyLLMAnonymizeApi(APIView):
    """Queue an anonymization of the study's descriptions with an LLM prompt (paper 002)."""

    class InputSerializer(serializers.Serializer):
        prompt = serializers.ChoiceField(choices=[name for name, _ in llm_prompt_choices()])

        class Meta:
            ref_name = "StudyLLMAnonymizeInput"

    @extend_schema(
        request=InputSerializer,
        responses={202: JobQueuedSerializer, 400: OpenApiResponse(description="not startable")},
        operation_id="studies_anonymize_llm",
    )
    def post(self, request: Request, pk: int) -> Response:
        study = _editable_study(request, pk)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = llm_jobs.llm_anonymization_start(
            study=study, user=request.user, prompt=data.validated_data["prompt"]
        )
        payload = JobQueuedSerializer({"job": job.pk, "kind": job.kind}).data
        return Response(payload, status=status.HTTP_202_ACCEPTED)


class StudyLLMIntruderApi(APIView):
    """Queue the open-world LLM intruder, or read its latest results."""

    class InputSerializer(serializers.Serializer):
        methods = serializers.ListField(
            child=serializers.CharField(max_length=50), required=False, default=list
        )
        k = serializers.IntegerField(min_value=1, max_value=10, required=False, default=3)

        class Meta:
            ref_name = "StudyLLMIntruderInput"

    class OutputSerializer(serializers.Serializer):
        job = serializers.IntegerField()
        complete = serializers.BooleanField()
        threshold = serializers.FloatField(allow_null=True)
        llm = serializers.DictField()
        methods = serializers.DictField()
        rows = serializers.ListField(child=serializers.DictField())

        class Meta:
            ref_name = "StudyLLMIntruderResults"

    @extend_schema(
        responses={200: OutputSerializer, 404: OpenApiResponse(description="none ran")},
        operation_id="studies_llm_intruder_results",
    )
    def get(self, request: Request, pk: int) -> Response:
        study = get_object_or_404(studies_visible_to(request.user), pk=pk)
        results = open_world_llm_results(study)
        if results is None:
            raise NotFound("no open-world LLM intruder results for this study")
        return Response(self.OutputSerializer(results).data)

    @extend_schema(
        request=InputSerializer,
        responses={202: JobQueuedSerializer, 400: OpenApiResponse(description="not startable")},
        operation_id="studies_llm_intruder_start",
    )
    def post(self, request: Request, pk: int) -> Response:
        study = _editable_study(request, pk)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = llm_jobs.llm_intruder_start(
            study=study,
            user=request.user,
            methods=data.validated_data["methods"],
            k=data.validated_data["k"],
        )
        payload = JobQueuedSerializer({"job": job.pk, "kind": job.kind}).data
        return Response(payload, status=status.HTTP_202_ACCEPTED)

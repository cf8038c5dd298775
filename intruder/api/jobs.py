"""Background jobs: list, detail with progress, retry of a failed job, cancel."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from intruder.api.access import can_retry_job, jobs_visible_to
from intruder.api.filters import JobFilter
from intruder.models import Job
from intruder.services import jobs as job_services


class JobListApi(generics.ListAPIView):
    """List the jobs of the user's studies (and the study-less jobs the user started)."""

    class OutputSerializer(serializers.ModelSerializer):
        progress_pct = serializers.FloatField(read_only=True)
        error = serializers.SerializerMethodField(
            help_text="A failed job's traceback, for those who may retry it (owners, editors);"
            " others read `message`, which names the error without server paths."
        )

        class Meta:
            model = Job
            ref_name = "Job"
            fields = [
                "id",
                "kind",
                "study",
                "created_by",
                "params",
                "status",
                "progress_done",
                "progress_total",
                "progress_pct",
                "message",
                "result",
                "error",
                "attempts",
                "created_at",
                "started_at",
                "finished_at",
                "heartbeat_at",
            ]

        def get_error(self, job: Job) -> str:
            request = self.context.get("request")
            user = getattr(request, "user", None)
            return job.error if user is not None and can_retry_job(user, job) else ""

    filterset_class = JobFilter
    ordering_fields = ["id", "created_at", "status"]
    serializer_class = OutputSerializer

    def get_queryset(self) -> QuerySet[Job]:
        return jobs_visible_to(self.request.user)


class JobDetailApi(generics.RetrieveAPIView):
    """Show one job with its progress (poll this for a progress bar)."""

    serializer_class = JobListApi.OutputSerializer

    def get_queryset(self) -> QuerySet[Job]:
        return jobs_visible_to(self.request.user)


def _job_to_edit(request: Request, pk: int, verb: str) -> Job:
    """Return the visible job `pk`; 403 unless the user may change its study's jobs."""
    job = get_object_or_404(jobs_visible_to(request.user), pk=pk)
    if not can_retry_job(request.user, job):
        raise PermissionDenied(f"only the study's owner or editors can {verb} its jobs")
    return job


class JobCancelApi(APIView):
    """Cancel a queued or running job; a running one stops at its next progress report."""

    @extend_schema(request=None, responses={200: JobListApi.OutputSerializer})
    def post(self, request: Request, pk: int) -> Response:
        job = job_services.job_cancel(job=_job_to_edit(request, pk, "cancel"))
        return Response(JobListApi.OutputSerializer(job, context={"request": request}).data)


class JobRetryApi(APIView):
    """Queue a failed job again; it resumes from the results its earlier attempt stored."""

    @extend_schema(request=None, responses={200: JobListApi.OutputSerializer})
    def post(self, request: Request, pk: int) -> Response:
        job = job_services.job_retry(job=_job_to_edit(request, pk, "retry"))
        return Response(JobListApi.OutputSerializer(job, context={"request": request}).data)

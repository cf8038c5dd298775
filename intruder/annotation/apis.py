"""Autosave API of the annotation page: GET the task's state, PUT a new version of it.

Researchers are identified by their session (CSRF-checked), crowd annotators by the token in
the URL. A PUT carries the revision it was based on; a stale one gets 409 with the current
state, so the page can show the conflict instead of overwriting.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from intruder.annotation.models import Task
from intruder.annotation.selectors import annotator_get_by_token, project_role, task_state
from intruder.annotation.services import (
    crowd_tasks_expire,
    project_paused,
    task_save,
)


class MentionInput(serializers.Serializer):
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=1)
    entity_type = serializers.CharField(max_length=100)
    identifier_type = serializers.CharField(max_length=10)
    confidential_status = serializers.CharField(max_length=20, required=False)
    entity = serializers.CharField(max_length=64)
    suggestion = serializers.IntegerField(min_value=0, required=False, allow_null=True)


class TaskSaveInput(serializers.Serializer):
    revision = serializers.IntegerField(min_value=0)
    mentions = MentionInput(many=True)
    rejected = serializers.ListField(child=serializers.IntegerField(min_value=0), required=False)


class _TaskApi(APIView):
    """GET/PUT one task; subclasses say whose tasks are reachable."""

    def get_task(self, request: Request, **kwargs) -> Task:
        raise NotImplementedError

    @extend_schema(request=None, responses={200: None, 404: None})
    def get(self, request: Request, **kwargs) -> Response:
        return Response(task_state(task=self.get_task(request, **kwargs)))

    @extend_schema(request=TaskSaveInput, responses={200: None, 400: None, 404: None, 409: None})
    def put(self, request: Request, **kwargs) -> Response:
        task = self.get_task(request, **kwargs)
        payload = TaskSaveInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        try:
            task = task_save(
                task=task,
                revision=data["revision"],
                mentions=[dict(m) for m in data["mentions"]],
                rejected=data.get("rejected", []),
            )
        except ValidationError as error:
            # One line for the annotation page's flash (annotate.js reads `detail`), where the
            # API's handler would name fields.
            return Response({"detail": "; ".join(error.messages)}, status=400)
        return Response(task_state(task=task))


class ResearcherTaskApi(_TaskApi):
    # The page uses the session (CSRF-checked); scripts and the schema fuzz use a token.
    authentication_classes = [SessionAuthentication, TokenAuthentication]
    permission_classes = [IsAuthenticated]

    def get_task(self, request: Request, **kwargs) -> Task:
        task = (
            Task.objects.select_related("document__project", "annotator")
            .filter(pk=kwargs["pk"], annotator__user=request.user)
            .first()
        )
        # The current role counts, not the seat: a removed member's tasks are out of reach.
        if task is None or project_role(project=task.document.project, user=request.user) is None:
            raise Http404
        return task


class CrowdTaskApi(_TaskApi):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get_task(self, request: Request, **kwargs) -> Task:
        annotator = annotator_get_by_token(token=kwargs["token"])
        if annotator is None or project_paused(project=annotator.project):
            raise Http404
        crowd_tasks_expire(project=annotator.project)
        task = (
            annotator.tasks.select_related("document__project")
            .filter(pk=kwargs["pk"], status=Task.Status.ACTIVE)
            .first()
        )
        if task is None:
            raise Http404
        return task

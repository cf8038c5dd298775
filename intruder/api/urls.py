"""URL patterns of the REST API (researchers only; token or session authentication)."""

from collections.abc import Callable
from typing import Any

from django.urls import path

from intruder.api.auth_token import LockoutAwareObtainAuthToken
from intruder.api.descriptions import DescriptionDetailApi, DescriptionListApi
from intruder.api.jobs import JobCancelApi, JobDetailApi, JobListApi, JobRetryApi
from intruder.api.judgments import (
    FamiliarityAnswerListApi,
    JudgmentDetailApi,
    JudgmentListApi,
)
from intruder.api.participants import ParticipantDetailApi, ParticipantListApi
from intruder.api.studies import (
    StudyCreateApi,
    StudyDetailApi,
    StudyListApi,
    StudyTakeApi,
    StudyUpdateApi,
)
from intruder.api.targets import TargetDetailApi, TargetListApi
from intruder.api.texts import (
    AnonymizedTextDetailApi,
    AnonymizedTextListApi,
    AnonymizedTextSpansUpdateApi,
    AnonymizedTextStatusUpdateApi,
)
from intruder.throttles import TokenObtainThrottle


def schema_view(name: str, **initkwargs: Any) -> Callable[..., Any]:
    """Return drf-spectacular's view `name`, imported at its first request: the schema's
    generator is 0.2 CPU s of every Django process's start otherwise (commands and workers
    that never serve it included)."""
    view: Callable[..., Any] | None = None

    def schema(request: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal view
        if view is None:
            from drf_spectacular import views

            view = getattr(views, name).as_view(**initkwargs)
        return view(request, *args, **kwargs)

    schema.csrf_exempt = True  # as DRF's views are: token-authenticated, never a form post
    return schema


urlpatterns = [
    # Password guesses: rate-limited per client here, and django-axes locks the username.
    path(
        "auth/token/",
        LockoutAwareObtainAuthToken.as_view(throttle_classes=[TokenObtainThrottle]),
        name="token-obtain",
    ),
    path("schema/", schema_view("SpectacularAPIView"), name="schema"),
    # The split view serves Swagger UI's settings as a script file: no inline script, so the
    # page works under the Content-Security-Policy.
    path("docs/", schema_view("SpectacularSwaggerSplitView", url_name="api:schema"), name="docs"),
    path("redoc/", schema_view("SpectacularRedocView", url_name="api:schema"), name="redoc"),
    path("studies/", StudyListApi.as_view(), name="study-list"),
    path("studies/create/", StudyCreateApi.as_view(), name="study-create"),
    path("studies/<id:pk>/", StudyDetailApi.as_view(), name="study-detail"),
    path("studies/<id:pk>/update/", StudyUpdateApi.as_view(), name="study-update"),
    path("studies/<id:pk>/take/", StudyTakeApi.as_view(), name="study-take"),
    path("targets/", TargetListApi.as_view(), name="target-list"),
    path("targets/<id:pk>/", TargetDetailApi.as_view(), name="target-detail"),
    path("descriptions/", DescriptionListApi.as_view(), name="description-list"),
    path("descriptions/<id:pk>/", DescriptionDetailApi.as_view(), name="description-detail"),
    path("anonymized-texts/", AnonymizedTextListApi.as_view(), name="text-list"),
    path("anonymized-texts/<id:pk>/", AnonymizedTextDetailApi.as_view(), name="text-detail"),
    path(
        "anonymized-texts/<id:pk>/spans/",
        AnonymizedTextSpansUpdateApi.as_view(),
        name="text-spans",
    ),
    path(
        "anonymized-texts/<id:pk>/status/",
        AnonymizedTextStatusUpdateApi.as_view(),
        name="text-status",
    ),
    path("participants/", ParticipantListApi.as_view(), name="participant-list"),
    path("participants/<id:pk>/", ParticipantDetailApi.as_view(), name="participant-detail"),
    path("judgments/", JudgmentListApi.as_view(), name="judgment-list"),
    path("judgments/<id:pk>/", JudgmentDetailApi.as_view(), name="judgment-detail"),
    path(
        "familiarity-answers/",
        FamiliarityAnswerListApi.as_view(),
        name="familiarity-answer-list",
    ),
    path("jobs/", JobListApi.as_view(), name="job-list"),
    path("jobs/<id:pk>/", JobDetailApi.as_view(), name="job-detail"),
    path("jobs/<id:pk>/retry/", JobRetryApi.as_view(), name="job-retry"),
    path("jobs/<id:pk>/cancel/", JobCancelApi.as_view(), name="job-cancel"),
]

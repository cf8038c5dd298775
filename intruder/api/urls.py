"""URL patterns of the REST API (researchers only; token or session authentication)."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.authtoken.views import ObtainAuthToken

from intruder.api.descriptions import DescriptionDetailApi, DescriptionListApi
from intruder.api.jobs import JobDetailApi, JobListApi, JobRetryApi
from intruder.api.judgments import JudgmentDetailApi, JudgmentListApi
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

app_name = "api"

urlpatterns = [
    path("auth/token/", ObtainAuthToken.as_view(), name="token-obtain"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    path("studies/", StudyListApi.as_view(), name="study-list"),
    path("studies/create/", StudyCreateApi.as_view(), name="study-create"),
    path("studies/<int:pk>/", StudyDetailApi.as_view(), name="study-detail"),
    path("studies/<int:pk>/update/", StudyUpdateApi.as_view(), name="study-update"),
    path("studies/<int:pk>/take/", StudyTakeApi.as_view(), name="study-take"),
    path("targets/", TargetListApi.as_view(), name="target-list"),
    path("targets/<int:pk>/", TargetDetailApi.as_view(), name="target-detail"),
    path("descriptions/", DescriptionListApi.as_view(), name="description-list"),
    path("descriptions/<int:pk>/", DescriptionDetailApi.as_view(), name="description-detail"),
    path("anonymized-texts/", AnonymizedTextListApi.as_view(), name="text-list"),
    path("anonymized-texts/<int:pk>/", AnonymizedTextDetailApi.as_view(), name="text-detail"),
    path(
        "anonymized-texts/<int:pk>/spans/",
        AnonymizedTextSpansUpdateApi.as_view(),
        name="text-spans",
    ),
    path(
        "anonymized-texts/<int:pk>/status/",
        AnonymizedTextStatusUpdateApi.as_view(),
        name="text-status",
    ),
    path("participants/", ParticipantListApi.as_view(), name="participant-list"),
    path("participants/<int:pk>/", ParticipantDetailApi.as_view(), name="participant-detail"),
    path("judgments/", JudgmentListApi.as_view(), name="judgment-list"),
    path("judgments/<int:pk>/", JudgmentDetailApi.as_view(), name="judgment-detail"),
    path("jobs/", JobListApi.as_view(), name="job-list"),
    path("jobs/<int:pk>/", JobDetailApi.as_view(), name="job-detail"),
    path("jobs/<int:pk>/retry/", JobRetryApi.as_view(), name="job-retry"),
]

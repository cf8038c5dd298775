"""The LLM jobs' REST endpoints, composed into the "api" namespace by `intruder.api_urls`."""

from django.urls import path

from intruder.llm_intruder.apis import StudyLLMAnonymizeApi, StudyLLMIntruderApi

urlpatterns = [
    path(
        "studies/<id:pk>/anonymize-llm/",
        StudyLLMAnonymizeApi.as_view(),
        name="study-anonymize-llm",
    ),
    path("studies/<id:pk>/llm-intruder/", StudyLLMIntruderApi.as_view(), name="study-llm-intruder"),
]

"""The LLM jobs' researcher URLs (mounted at /r/, beside the study page)."""

from django.urls import path

from intruder.llm_intruder import views

urlpatterns = [
    path(
        "<slug:slug>/anonymize-llm/",
        views.study_anonymize_llm,
        name="researcher-study-anonymize-llm",
    ),
    path(
        "<slug:slug>/llm-intruder/", views.study_llm_intruder, name="researcher-study-llm-intruder"
    ),
]

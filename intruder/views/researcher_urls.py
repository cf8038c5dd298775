"""Researcher URLs (mounted at /r/)."""

from django.urls import path

from intruder.views import researcher

urlpatterns = [
    path("", researcher.study_list, name="researcher-studies"),
    path("progress.json", researcher.progress_json, name="researcher-progress"),
    path("new/", researcher.study_create, name="researcher-study-create"),
    path("jobs/<int:pk>.json", researcher.job_status_json, name="researcher-job-status"),
    path("jobs/<int:pk>/retry/", researcher.job_retry, name="researcher-job-retry"),
    path("<slug:slug>/", researcher.study_detail, name="researcher-study"),
    path("<slug:slug>/edit/", researcher.study_edit, name="researcher-study-edit"),
    path("<slug:slug>/import/", researcher.study_import, name="researcher-study-import"),
    path("<slug:slug>/anonymize/", researcher.study_anonymize, name="researcher-study-anonymize"),
    path("<slug:slug>/review/", researcher.review_list, name="researcher-review"),
    path("<slug:slug>/review/guard/", researcher.study_guard, name="researcher-study-guard"),
    path("<slug:slug>/review/<int:pk>/", researcher.review_text, name="researcher-review-text"),
    path("<slug:slug>/release/", researcher.release_bulk, name="researcher-release"),
    path(
        "<slug:slug>/export/<str:table>.<str:fmt>",
        researcher.export_table,
        name="researcher-export",
    ),
]

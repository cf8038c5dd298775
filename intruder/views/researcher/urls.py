"""Researcher URLs (mounted at /r/)."""

from django.urls import path

from intruder.views import (
    researcher,
    researcher_flags,
    researcher_manage,
    researcher_monitor,
    researcher_review,
)

urlpatterns = [
    path("", researcher.study_list, name="researcher-studies"),
    path("progress.json", researcher.progress_json, name="researcher-progress"),
    path("new/", researcher.study_create, name="researcher-study-create"),
    path("jobs/<id:pk>.json", researcher.job_status_json, name="researcher-job-status"),
    path("jobs/<id:pk>/retry/", researcher.job_retry, name="researcher-job-retry"),
    path("jobs/<id:pk>/cancel/", researcher.job_cancel, name="researcher-job-cancel"),
    path("<slug:slug>/", researcher.study_detail, name="researcher-study"),
    path(
        "<slug:slug>/participants/",
        researcher_monitor.study_participants,
        name="researcher-participants",
    ),
    path("<slug:slug>/flags/", researcher_flags.flags_page, name="researcher-flags"),
    path(
        "<slug:slug>/flags/rules/",
        researcher_flags.exclusion_rules_save,
        name="researcher-exclusion-rules",
    ),
    path(
        "<slug:slug>/flags/<str:kind>/<id:pk>/",
        researcher_flags.flag_review,
        name="researcher-flag-review",
    ),
    path("<slug:slug>/manage/", researcher_manage.study_manage, name="researcher-manage"),
    path("<slug:slug>/clone/", researcher_manage.study_clone, name="researcher-clone"),
    path("<slug:slug>/archive/", researcher_manage.study_archive, name="researcher-archive"),
    path("<slug:slug>/members/", researcher_manage.member_add, name="researcher-member-add"),
    path(
        "<slug:slug>/members/<id:user_id>/remove/",
        researcher_manage.member_remove,
        name="researcher-member-remove",
    ),
    path("<slug:slug>/edit/", researcher.study_edit, name="researcher-study-edit"),
    path("<slug:slug>/import/", researcher.study_import, name="researcher-study-import"),
    path("<slug:slug>/take/", researcher.study_take_from_sources, name="researcher-study-take"),
    path("<slug:slug>/anonymize/", researcher.study_anonymize, name="researcher-study-anonymize"),
    path(
        "<slug:slug>/anonymize-llm/",
        researcher.study_anonymize_llm,
        name="researcher-study-anonymize-llm",
    ),
    path(
        "<slug:slug>/llm-intruder/",
        researcher.study_llm_intruder,
        name="researcher-study-llm-intruder",
    ),
    path("<slug:slug>/review/", researcher_review.review_list, name="researcher-review"),
    path(
        "<slug:slug>/review/<id:pk>/", researcher_review.review_text, name="researcher-review-text"
    ),
    path("<slug:slug>/release/", researcher_review.release_bulk, name="researcher-release"),
    path("<slug:slug>/review/guard/", researcher_review.study_guard, name="researcher-study-guard"),
    path(
        "<slug:slug>/review/guard/rows.json",
        researcher_review.study_guard_rows,
        name="researcher-study-guard-rows",
    ),
    path(
        "<slug:slug>/export/<str:table>.<str:fmt>",
        researcher.export_table,
        name="researcher-export",
    ),
]

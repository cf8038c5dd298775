"""Researcher URLs (mounted at /r/)."""

from django.urls import path

from intruder.views.researcher import flags, manage, monitor, review, studies

urlpatterns = [
    path("", studies.study_list, name="researcher-studies"),
    path("progress.json", studies.progress_json, name="researcher-progress"),
    path("new/", studies.study_create, name="researcher-study-create"),
    path("jobs/<id:pk>.json", studies.job_status_json, name="researcher-job-status"),
    path("jobs/<id:pk>/retry/", studies.job_retry, name="researcher-job-retry"),
    path("jobs/<id:pk>/cancel/", studies.job_cancel, name="researcher-job-cancel"),
    path("<slug:slug>/", studies.study_detail, name="researcher-study"),
    path(
        "<slug:slug>/participants/",
        monitor.study_participants,
        name="researcher-participants",
    ),
    path("<slug:slug>/flags/", flags.flags_page, name="researcher-flags"),
    path(
        "<slug:slug>/flags/rules/",
        flags.exclusion_rules_save,
        name="researcher-exclusion-rules",
    ),
    path(
        "<slug:slug>/flags/<str:kind>/<id:pk>/",
        flags.flag_review,
        name="researcher-flag-review",
    ),
    path("<slug:slug>/manage/", manage.study_manage, name="researcher-manage"),
    path("<slug:slug>/clone/", manage.study_clone, name="researcher-clone"),
    path("<slug:slug>/archive/", manage.study_archive, name="researcher-archive"),
    path("<slug:slug>/members/", manage.member_add, name="researcher-member-add"),
    path(
        "<slug:slug>/members/<id:user_id>/remove/",
        manage.member_remove,
        name="researcher-member-remove",
    ),
    path("<slug:slug>/edit/", studies.study_edit, name="researcher-study-edit"),
    path("<slug:slug>/import/", studies.study_import, name="researcher-study-import"),
    path("<slug:slug>/take/", studies.study_take_from_sources, name="researcher-study-take"),
    path("<slug:slug>/anonymize/", studies.study_anonymize, name="researcher-study-anonymize"),
    path(
        "<slug:slug>/anonymize-llm/",
        studies.study_anonymize_llm,
        name="researcher-study-anonymize-llm",
    ),
    path(
        "<slug:slug>/llm-intruder/",
        studies.study_llm_intruder,
        name="researcher-study-llm-intruder",
    ),
    path("<slug:slug>/review/", review.review_list, name="researcher-review"),
    path("<slug:slug>/review/<id:pk>/", review.review_text, name="researcher-review-text"),
    path("<slug:slug>/release/", review.release_bulk, name="researcher-release"),
    path("<slug:slug>/review/guard/", review.study_guard, name="researcher-study-guard"),
    path(
        "<slug:slug>/review/guard/rows.json",
        review.study_guard_rows,
        name="researcher-study-guard-rows",
    ),
    path(
        "<slug:slug>/export/<str:table>.<str:fmt>",
        studies.export_table,
        name="researcher-export",
    ),
]

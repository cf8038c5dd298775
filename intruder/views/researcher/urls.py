"""Researcher URLs (mounted at /r/); a study's pages live under its slug."""

from django.urls import include, path

from intruder.views.researcher import manage, monitor, review, studies

study_urls = [
    path("", studies.study_detail, name="researcher-study"),
    path("participants/", monitor.study_participants, name="researcher-participants"),
    path("manage/", manage.study_manage, name="researcher-manage"),
    path("clone/", manage.study_clone, name="researcher-clone"),
    path("archive/", manage.study_archive, name="researcher-archive"),
    path("members/", manage.member_add, name="researcher-member-add"),
    path("members/<id:user_id>/remove/", manage.member_remove, name="researcher-member-remove"),
    path("edit/", studies.study_edit, name="researcher-study-edit"),
    path("import/", studies.study_import, name="researcher-study-import"),
    path("take/", studies.study_take_from_sources, name="researcher-study-take"),
    path("anonymize/", studies.study_anonymize, name="researcher-study-anonymize"),
    path("review/", review.review_list, name="researcher-review"),
    path("review/<id:pk>/", review.review_text, name="researcher-review-text"),
    path("release/", review.release_bulk, name="researcher-release"),
    path("export/<str:table>.<str:fmt>", studies.export_table, name="researcher-export"),
]

urlpatterns = [
    path("", studies.study_list, name="researcher-studies"),
    path("progress.json", studies.progress_json, name="researcher-progress"),
    path("new/", studies.study_create, name="researcher-study-create"),
    path("jobs/<id:pk>.json", studies.job_status_json, name="researcher-job-status"),
    path("jobs/<id:pk>/retry/", studies.job_retry, name="researcher-job-retry"),
    path("jobs/<id:pk>/cancel/", studies.job_cancel, name="researcher-job-cancel"),
    path("<slug:slug>/", include(study_urls)),
]

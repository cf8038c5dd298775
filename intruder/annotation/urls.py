"""Annotation URLs: researcher pages under /annotate/, crowd annotator pages under /a/."""

from django.urls import path

from intruder.annotation import apis, members, views

urlpatterns = [
    path("annotate/", views.project_list, name="annotation-projects"),
    path("annotate/new/", views.project_create, name="annotation-project-create"),
    path("annotate/<slug:slug>/", views.project_detail, name="annotation-project"),
    path("annotate/<slug:slug>/texts/", views.project_add_texts, name="annotation-add-texts"),
    path("annotate/<slug:slug>/members/", members.project_members, name="annotation-members"),
    path(
        "annotate/<slug:slug>/members/<int:user_id>/remove/",
        members.project_member_remove,
        name="annotation-member-remove",
    ),
    path("annotate/<slug:slug>/open/", views.project_open, name="annotation-project-open"),
    path("annotate/<slug:slug>/import/", views.project_import, name="annotation-import"),
    path("annotate/<slug:slug>/work/", views.work_next, name="annotation-work"),
    path("annotate/<slug:slug>/task/<int:pk>/", views.task_page, name="annotation-task"),
    path("annotate/<slug:slug>/task/<int:pk>/submit/", views.task_done, name="annotation-submit"),
    path("annotate/<slug:slug>/agreement/", views.agreement, name="annotation-agreement"),
    path("annotate/<slug:slug>/evaluate/", views.evaluate, name="annotation-evaluate"),
    path("annotate/<slug:slug>/adjudicate/", views.adjudicate, name="annotation-adjudicate"),
    path("annotate/<slug:slug>/export/<str:fmt>/", views.export, name="annotation-export"),
    path("annotate/api/tasks/<int:pk>/", apis.ResearcherTaskApi.as_view(), name="annotation-api"),
    path("a/<slug:slug>/", views.crowd_entry, name="annotation-crowd-entry"),
    path("a/p/<str:token>/", views.crowd_home, name="annotation-crowd-home"),
    path("a/p/<str:token>/start/", views.crowd_start, name="annotation-crowd-start"),
    path("a/p/<str:token>/submit/", views.crowd_submit, name="annotation-crowd-submit"),
    path(
        "a/p/<str:token>/api/tasks/<int:pk>/",
        apis.CrowdTaskApi.as_view(),
        name="annotation-crowd-api",
    ),
]

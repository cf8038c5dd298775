"""URLs of the researcher's study preview (mounted at /r/, like the other researcher pages)."""

from django.urls import path

from intruder.views import preview

urlpatterns = [
    path("<slug:slug>/preview/", preview.study_preview, name="researcher-preview"),
    path(
        "<slug:slug>/preview/<str:step>/",
        preview.study_preview,
        name="researcher-preview-step",
    ),
    path(
        "<slug:slug>/preview/<str:step>/<int:number>/",
        preview.study_preview,
        name="researcher-preview-item",
    ),
]

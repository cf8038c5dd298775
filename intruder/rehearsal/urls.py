"""The rehearsal's URL (mounted at /r/, beside the study page it belongs to)."""

from django.urls import path

from intruder.rehearsal import views

urlpatterns = [
    path("<slug:slug>/rehearse/", views.study_rehearse, name="researcher-study-rehearse"),
]

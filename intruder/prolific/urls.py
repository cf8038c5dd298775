"""Prolific URLs: the webhook, and a study's Prolific page and actions (under /r/<slug>/)."""

from django.urls import include, path

from intruder.prolific import researcher_views as pages
from intruder.prolific import views

study_urls = [
    path("", pages.prolific_page, name="researcher-prolific"),
    path("draft/", pages.prolific_draft, name="researcher-prolific-draft"),
    path("transition/", pages.prolific_transition, name="researcher-prolific-transition"),
    path("sync/", pages.prolific_sync, name="researcher-prolific-sync"),
    path("review/", pages.prolific_review, name="researcher-prolific-review"),
    path("bulk/<slug:rule>/", pages.prolific_bulk, name="researcher-prolific-bulk"),
    path("bonus/", pages.prolific_bonus, name="researcher-prolific-bonus"),
]

urlpatterns = [
    path("prolific/webhook/", views.webhook, name="prolific-webhook"),
    path("r/<slug:slug>/prolific/", include(study_urls)),
]

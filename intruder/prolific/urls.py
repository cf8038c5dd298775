from django.urls import path

from intruder.prolific import researcher_views, views

urlpatterns = [
    path("prolific/webhook/", views.webhook, name="prolific-webhook"),
    path("r/<slug:slug>/prolific/", researcher_views.prolific_page, name="researcher-prolific"),
    path(
        "r/<slug:slug>/prolific/draft/",
        researcher_views.prolific_draft,
        name="researcher-prolific-draft",
    ),
    path(
        "r/<slug:slug>/prolific/transition/",
        researcher_views.prolific_transition,
        name="researcher-prolific-transition",
    ),
    path(
        "r/<slug:slug>/prolific/sync/",
        researcher_views.prolific_sync,
        name="researcher-prolific-sync",
    ),
    path(
        "r/<slug:slug>/prolific/review/",
        researcher_views.prolific_review,
        name="researcher-prolific-review",
    ),
    path(
        "r/<slug:slug>/prolific/bulk/<slug:rule>/",
        researcher_views.prolific_bulk,
        name="researcher-prolific-bulk",
    ),
    path(
        "r/<slug:slug>/prolific/bonus/",
        researcher_views.prolific_bonus,
        name="researcher-prolific-bonus",
    ),
]

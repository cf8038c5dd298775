"""Participant URLs: the Prolific entry link and the token-addressed study pages.

Each page's form posts to its own URL, made from the table of pages (`participant.PAGES`).
"""

from django.urls import path

from intruder.views import participant

urlpatterns = [
    path("s/<slug:slug>/", participant.entry, name="participant-entry"),
    path("p/<str:token>/", participant.home, name="participant-home"),
    path("p/<str:token>/telemetry/", participant.telemetry, name="participant-telemetry"),
    path("p/<str:token>/familiarity/", participant.familiarity, name="participant-familiarity"),
    *(
        path(f"p/<str:token>/{page.path}/", page.view, name=page.url_name)
        for page in participant.PAGES.values()
    ),
]

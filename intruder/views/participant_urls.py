"""Participant URLs: the Prolific entry link and the token-addressed study pages.

Each page's form posts to its own URL, made from the table of pages (`pages.PAGES`).
"""

from django.urls import path

from intruder.views.participant import flow
from intruder.views.participant.pages import PAGES

urlpatterns = [
    path("s/<slug:slug>/", flow.entry, name="participant-entry"),
    path("p/<str:token>/", flow.home, name="participant-home"),
    path("p/<str:token>/telemetry/", flow.telemetry, name="participant-telemetry"),
    *(
        path(f"p/<str:token>/{page.path}/", page.view, name=page.url_name)
        for page in PAGES.values()
    ),
]

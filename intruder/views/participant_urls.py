"""Participant URLs: the Prolific entry link and the token-addressed study pages."""

from django.urls import path

from intruder.views import participant

urlpatterns = [
    path("s/<slug:slug>/", participant.entry, name="participant-entry"),
    path("p/<str:token>/", participant.home, name="participant-home"),
    path("p/<str:token>/consent/", participant.consent, name="participant-consent"),
    path("p/<str:token>/instructions/", participant.instructions, name="participant-instructions"),
    path("p/<str:token>/write/", participant.write, name="participant-write"),
    path("p/<str:token>/judge/", participant.judge, name="participant-judge"),
    path("p/<str:token>/check/", participant.attention_check, name="participant-check"),
    path("p/<str:token>/finish/", participant.finish, name="participant-finish"),
]

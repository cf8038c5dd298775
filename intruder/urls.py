"""URL map: participant flows, researcher pages, analyses, REST API, admin."""

from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path, register_converter
from django.views.generic import RedirectView

from intruder.auth import LoginForm
from intruder.converters import DatabaseIdConverter

register_converter(DatabaseIdConverter, "id")

urlpatterns = [
    # First: the participant pages take most of the requests during a launch, and the
    # resolver tries the patterns in order (none of the others overlaps them).
    path("", include("intruder.views.participant_urls")),
    path("admin/", admin.site.urls),
    # The login page's own form: it says why the demo password is refused (intruder.auth).
    path("accounts/login/", LoginView.as_view(authentication_form=LoginForm), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("r/", include("intruder.views.researcher.urls")),
    path("r/", include("intruder.analysis.urls")),
    path("r/", include("intruder.evidence.urls")),
    path("r/", include("intruder.llm_intruder.urls")),
    path("r/", include("intruder.risk.urls")),
    path("r/", include("intruder.rehearsal.urls")),
    path("r/", include("intruder.views.preview_urls")),
    path("api/", include("intruder.api_urls")),
    path("", include("intruder.prolific.urls")),
    path("", include("intruder.annotation.urls")),
    # The bare site address leads researchers to their pages (login first); participants
    # always arrive on a study's entry link.
    path("", RedirectView.as_view(pattern_name="researcher-studies"), name="home"),
]

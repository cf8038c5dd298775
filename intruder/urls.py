"""URL map: participant flows, researcher pages, analyses, REST API, admin."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("r/", include("intruder.views.researcher_urls")),
    path("r/", include("intruder.views.analysis_urls")),
    path("api/", include("intruder.api.urls")),
    path("", include("intruder.views.participant_urls")),
]

"""URL map: participant flows, researcher pages, REST API, admin."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    # Each area owns its URL module; added as the areas land:
    # path("", include("intruder.views.participant_urls")),   participant flows
    # path("r/", include("intruder.views.researcher_urls")),  researcher pages (login)
    # path("api/", include("intruder.api.urls")),              REST API (token auth)
]

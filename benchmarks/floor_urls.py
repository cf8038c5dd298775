"""URLs of `server_floor.py`: two floor views in front of the app's own URLs."""

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import path

from intruder.selectors.participant import participant_get_by_token
from intruder.urls import urlpatterns as app_urlpatterns


def empty(request: HttpRequest) -> HttpResponse:
    """Answer "ok": the cost of the middleware stack and the server alone."""
    return HttpResponse("ok", content_type="text/plain")


def one_query(request: HttpRequest, token: str) -> HttpResponse:
    """Read the participant (with its study) as every participant page does, then "ok"."""
    if participant_get_by_token(token=token) is None:
        raise Http404("No such participant session.")
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("floor/empty/", empty),
    path("floor/one-query/<str:token>/", one_query),
    *app_urlpatterns,
]

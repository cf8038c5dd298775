"""URL patterns of the REST API."""

urlpatterns: list = []

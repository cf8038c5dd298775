"""URL patterns; filled in by the area that owns them."""

urlpatterns: list = []

"""Password authentication that refuses the demo's well-known password outside the demo."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.http import HttpRequest

# The demo account's default password is printed in the README, so it must not open a real
# deployment where someone ran `load_demo`. One home: intruder.demo imports it from here.
DEMO_PASSWORD = "intruder-demo"


class PasswordBackend(ModelBackend):
    """Django's username/password backend, except the demo password outside the demo."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if password == DEMO_PASSWORD and not settings.INTRUDER_DEMO:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)

"""The API's token endpoint: DRF's, with django-axes' lockout answered as 429."""

from __future__ import annotations

from typing import Any

from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response


class LockoutAwareObtainAuthToken(ObtainAuthToken):
    """DRF's token endpoint, answering 429 (as the login page does) for a locked-out client.

    django-axes refuses a locked-out username inside `authenticate`, which DRF reports as
    bad credentials (400); the lockout is told apart by the flag axes sets on the request.
    """

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            return super().post(request, *args, **kwargs)
        except ValidationError:
            if getattr(request, "axes_locked_out", False) or getattr(
                request._request, "axes_locked_out", False
            ):
                return Response(
                    {"detail": "Too many failed attempts: this account is locked for a while."},
                    status=429,
                )
            raise

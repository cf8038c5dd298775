"""The API's one exception handler (REST_FRAMEWORK["EXCEPTION_HANDLER"]).

DRF's own handler answers DRF's exceptions; this one adds the app's (`IntruderError`, each
with its status and body) and Django's model `ValidationError` (a 400 naming the fields, as
a serializer's errors do), so views call services and let errors rise.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from intruder.exceptions import IntruderError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Return the response for `exc`, or None (a 500) for errors no one raised on purpose."""
    if isinstance(exc, IntruderError):
        # Built here rather than as an APIException: its detail would turn a body's numbers
        # (a conflict's current state) into strings.
        set_rollback()
        return Response(exc.api_body(), status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(as_serializer_error(exc))
    return drf_exception_handler(exc, context)

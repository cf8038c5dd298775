"""The app's one exception base: every error `intruder` raises on purpose derives from it.

Each class says how the API answers it (`status_code`, and the body: `{"detail": message}`,
or `{api_field: [message]}` where the error belongs to one input field), and the one DRF
exception handler (`intruder.api.exception_handlers`) answers so: API views do not map
errors by hand, and no error the app raises on purpose reaches a client as a 500.
HTML views that take a form have one path too (`errors_as_messages`): the error becomes a
message on the page the view redirects to, so a view calls its service and lets it raise.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse


class IntruderError(Exception):
    """An error the app raises on purpose, worded for the person who caused it."""

    status_code: int = 400
    # None: the body is {"detail": message}; a name: {name: [message]}.
    api_field: str | None = None

    def api_body(self) -> dict[str, Any]:
        """Return the JSON body an API answers this error with."""
        message = str(self)
        return {self.api_field: [message]} if self.api_field else {"detail": message}


View = Callable[..., HttpResponse]


def errors_as_messages(
    url_name: str | Callable[..., str],
    *,
    kwargs: tuple[str, ...] = ("slug",),
    fragment: str = "",
    prefix: str = "",
) -> Callable[[View], View]:
    """Turn what a form view's service refuses into an error message and a redirect.

    Catches `IntruderError` and Django's `ValidationError` (the services' refusals, worded
    for the person who caused them): the message is `prefix` and the error's words, and the
    redirect goes to `url_name` reversed with the view's keyword arguments named in `kwargs`
    (and `#fragment`, formatted with them), or to what `url_name(request, **view_kwargs)`
    returns. Anything else still rises (a 500, logged).
    """

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **view_kwargs: Any) -> HttpResponse:
            try:
                return view(request, *args, **view_kwargs)
            except (IntruderError, ValidationError) as error:
                words = " ".join(error.messages) if isinstance(error, ValidationError) else error
                messages.error(request, f"{prefix}{words}")
                if callable(url_name):
                    url = url_name(request, **view_kwargs)
                else:
                    url = reverse(url_name, kwargs={name: view_kwargs[name] for name in kwargs})
                return redirect(f"{url}#{fragment.format(**view_kwargs)}" if fragment else url)

        return wrapped

    return decorate

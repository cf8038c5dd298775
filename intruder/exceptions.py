"""The app's one exception base: every error `intruder` raises on purpose derives from it.

Each class says how the API answers it (`status_code`, and the body: `{"detail": message}`,
or `{api_field: [message]}` where the error belongs to one input field), and the one DRF
exception handler (`intruder.api.exception_handlers`) answers so: API views do not map
errors by hand, and no error the app raises on purpose reaches a client as a 500.
Pages catch these errors themselves and say what happened in words.
"""

from __future__ import annotations

from typing import Any


class IntruderError(Exception):
    """An error the app raises on purpose, worded for the person who caused it."""

    status_code: int = 400
    # None: the body is {"detail": message}; a name: {name: [message]}.
    api_field: str | None = None

    def api_body(self) -> dict[str, Any]:
        """Return the JSON body an API answers this error with."""
        message = str(self)
        return {self.api_field: [message]} if self.api_field else {"detail": message}

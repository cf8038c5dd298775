"""Rate limits per client: Prolific enrolment, and the API's token endpoint.

Both are DRF throttles (history of timestamps in Django's cache). The client is told apart
by DRF's `get_ident`: REMOTE_ADDR, or the address the trusted proxies appended to
X-Forwarded-For when `INTRUDER_NUM_PROXIES` (REST_FRAMEWORK["NUM_PROXIES"]) says how many
there are. The login page's own limit is django-axes, which asks `client_ip` the same way.

Rates are read from settings on every use (not at import, as DRF's scoped throttles do), so
tests and deployments can change them; None turns a limit off.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle


def client_ip(request: HttpRequest) -> str:
    """Return the client's address as the throttles see it (also django-axes' callable)."""
    return BaseThrottle().get_ident(request)


class SettingsRateThrottle(SimpleRateThrottle):
    """A throttle per client address whose rate is the Django setting `rate_setting`."""

    rate_setting: str

    def get_rate(self) -> str | None:
        return getattr(settings, self.rate_setting, None) or None

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}


class EnrolmentThrottle(SettingsRateThrottle):
    """New Prolific PIDs one client may enrol (resuming a known PID is never limited).

    Each new enrolment may take a judgment slot; without a limit one client could make up
    PIDs until a study looks full.
    """

    scope = "enrolment"
    rate_setting = "INTRUDER_ENROLMENT_RATE"


class TokenObtainThrottle(SettingsRateThrottle):
    """Password attempts on the API's token endpoint per client (brute-force protection)."""

    scope = "auth_token"
    rate_setting = "INTRUDER_TOKEN_RATE"

"""A server with DEBUG off must not run on the public default SECRET_KEY.

`refuse_unsafe_start` runs when `intruder.wsgi` is imported, so gunicorn and `runserver`
(which loads the same WSGI application) refuse to start; `manage.py check --deploy` reports
it as an error. Other commands (migrate, makemigrations, ...) sign nothing and still run.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register
from django.core.exceptions import ImproperlyConfigured

PUBLIC_SECRET_KEY_MESSAGE = (
    "DEBUG is off and SECRET_KEY is the public default from intruder/settings.py: anyone "
    "could forge sessions and signed cookies. Set DJANGO_SECRET_KEY to a long random value "
    "(python -c 'import secrets; print(secrets.token_urlsafe(50))')."
)


def public_secret_key_in_use() -> bool:
    """Return whether a non-debug server would sign with the key printed in the source."""
    return not settings.DEBUG and settings.SECRET_KEY == settings.INSECURE_DEFAULT_SECRET_KEY


@register(deploy=True)
def secret_key_check(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """Fail `check --deploy` on the public key with DEBUG off."""
    if public_secret_key_in_use():
        return [Error(PUBLIC_SECRET_KEY_MESSAGE, id="intruder.E001")]
    return []


def refuse_unsafe_start() -> None:
    """Raise ImproperlyConfigured instead of serving with the public key."""
    if public_secret_key_in_use():
        raise ImproperlyConfigured(PUBLIC_SECRET_KEY_MESSAGE)

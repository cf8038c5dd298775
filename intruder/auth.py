"""Password authentication that refuses the demo's well-known password outside the demo."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
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


class LoginForm(AuthenticationForm):
    """Django's login form, saying why the demo password is refused rather than blaming it.

    The demo password is public, so saying it is disabled here reveals nothing; a wrong
    password or a wrong username still get Django's one message for both.
    """

    demo_password_refused = False  # the page shows this form's own message then

    def get_invalid_login_error(self) -> ValidationError:
        if self.cleaned_data.get("password") == DEMO_PASSWORD and not settings.INTRUDER_DEMO:
            self.demo_password_refused = True
            return ValidationError(
                "The demo password works only in demo mode (scripts/demo.sh, or "
                "INTRUDER_DEMO=1), and in the Prolific sandbox; this site is not running "
                "in either.",
                code="demo_password_off",
            )
        return super().get_invalid_login_error()

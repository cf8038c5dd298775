"""One error path for HTML form views: a refused service call becomes a message and a redirect."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.contrib.messages.storage.fallback import FallbackStorage
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.test import RequestFactory

from intruder.exceptions import IntruderError, errors_as_messages
from intruder.services.review import StatusError


def _request():
    request = RequestFactory().post("/r/some-study/flags/")
    request.session = {}
    request._messages = FallbackStorage(request)
    return request


@errors_as_messages("researcher-flags", fragment="{kind}-{pk}", prefix="Not saved: ")
def view(request, slug: str, kind: str, pk: int, raise_: Exception | None = None):
    if raise_ is not None:
        raise raise_
    return HttpResponse("done")


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (StatusError("cannot change a released text to draft"), "cannot change a released"),
        (ValidationError({"reason": ["say why"], "decision": ["choose one"]}), "say why"),
    ],
)
def test_a_refusal_becomes_a_message_and_a_redirect_to_the_named_page(error, words) -> None:
    request = _request()
    response = view(request, slug="some-study", kind="judgment", pk=7, raise_=error)
    assert response.status_code == 302
    assert response["Location"] == "/r/some-study/flags/#judgment-7"
    [message] = list(get_messages(request))
    assert message.level_tag == "error"
    assert str(message).startswith("Not saved: ") and words in str(message)


def test_a_view_that_succeeds_is_untouched_and_other_errors_still_rise() -> None:
    request = _request()
    assert view(request, slug="s", kind="judgment", pk=1).content == b"done"
    assert not list(get_messages(request))
    with pytest.raises(KeyError):  # a bug is a 500, never dressed up as a refusal
        view(_request(), slug="s", kind="judgment", pk=1, raise_=KeyError("bug"))


def test_no_error_the_app_raises_on_purpose_is_a_value_or_key_error() -> None:
    """Code catching ValueError (a parse) must not swallow a refusal, nor the reverse."""

    def subclasses(cls: type) -> set[type]:
        found = set(cls.__subclasses__())
        return found.union(*(subclasses(child) for child in found))

    import intruder.urls  # noqa: F401  (imports every module that defines an error)

    errors = subclasses(IntruderError)
    assert len(errors) > 20
    assert not [e for e in errors if issubclass(e, (ValueError, KeyError))]

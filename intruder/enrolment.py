"""Crowd enrolment from a Prolific link: one home for writers, intruders and crowd annotators.

Everything the crowd entry pages share lives here, so that the study side and the annotation
side cannot drift apart: the PROLIFIC_PID check, the defences a new PID meets (the link's
STUDY_ID, participation in a linked study, the per-client rate limit), the entry link with
Prolific's URL parameters, the completion URL, the signed cookie that resumes someone who
opens the entry link again without its query string, and the page each refusal shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from intruder.exceptions import IntruderError
from intruder.models import PROLIFIC_ID_PATTERN
from intruder.throttles import EnrolmentThrottle

PROLIFIC_ID_RE = re.compile(PROLIFIC_ID_PATTERN)
# Prolific replaces these placeholders in a study URL when "URL parameters" is on.
PROLIFIC_URL_PARAMETERS = (
    "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"


class EnrolmentRefused(IntruderError):
    """Someone cannot start a crowd study; `code` names why (one page per code)."""

    status_code = 403

    MISSING_PID = "missing_pid"
    INVALID_PID = "invalid_pid"
    CLOSED = "closed"
    NOT_READY = "not_ready"
    FULL = "full"
    WRONG_STUDY = "wrong_study"
    LINKED = "linked"
    THROTTLED = "throttled"
    UNKNOWN_TO_PROLIFIC = "unknown_to_prolific"

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


# What each refusal shows: HTTP status, title and text.
REFUSAL_PAGES = {
    EnrolmentRefused.MISSING_PID: (
        400,
        "Missing Prolific ID",
        "This link is missing your Prolific ID (PROLIFIC_PID). Please open the study from "
        "Prolific again, or copy the full link from the Prolific study page.",
    ),
    EnrolmentRefused.INVALID_PID: (
        400,
        "Invalid Prolific ID",
        "The Prolific ID in this link is not valid. Please open the study from Prolific again.",
    ),
    EnrolmentRefused.CLOSED: (
        403,
        "This study is closed",
        "This study is not accepting new participants. Please return the study on Prolific.",
    ),
    EnrolmentRefused.NOT_READY: (
        503,
        "This study is not ready yet",
        "This study has nothing to show yet. Please return the study on Prolific.",
    ),
    EnrolmentRefused.FULL: (
        403,
        "This study is full",
        "Every text in this study has all the judgments it needs, or is being judged by "
        "someone else right now. Please return the study on Prolific.",
    ),
    EnrolmentRefused.WRONG_STUDY: (
        403,
        "This link is not for this study",
        "The study ID in this link does not belong to this study. Please open the study "
        "from Prolific again.",
    ),
    EnrolmentRefused.LINKED: (
        403,
        "You cannot take part in this study",
        "You have taken part in a related study, so your answers here would not be "
        "independent. Please return the study on Prolific. Thank you for your interest.",
    ),
    EnrolmentRefused.UNKNOWN_TO_PROLIFIC: (
        403,
        "Prolific does not know this place",
        "Prolific has no active submission for your ID in this study, or it could not be "
        "checked just now. Please start the study from Prolific (\u201cOpen study in a new "
        "window\u201d) and try again. If you have returned the study, you cannot take part.",
    ),
    EnrolmentRefused.THROTTLED: (
        429,
        "Too many sign-ups",
        "Too many new participants have started from your network recently. Please try "
        "again later.",
    ),
}


@dataclass(frozen=True)
class ProlificLink:
    """The three Prolific URL parameters an entry link was opened with (raw, unchecked)."""

    pid: str = ""
    study_id: str = ""
    session_id: str = ""

    @classmethod
    def from_request(cls, request: HttpRequest) -> ProlificLink:
        """Return the parameters of the request's query string ("" for each one missing)."""
        return cls(
            pid=request.GET.get("PROLIFIC_PID", ""),
            study_id=request.GET.get("STUDY_ID", ""),
            session_id=request.GET.get("SESSION_ID", ""),
        )


def prolific_pid_check(prolific_pid: str) -> str:
    """Return the link's PROLIFIC_PID stripped; refuse a missing or malformed one."""
    pid = (prolific_pid or "").strip()
    if not pid:
        raise EnrolmentRefused(EnrolmentRefused.MISSING_PID)
    if not PROLIFIC_ID_RE.match(pid):
        raise EnrolmentRefused(EnrolmentRefused.INVALID_PID)
    return pid


def prolific_id_clean(value: str) -> str:
    """Return a Prolific STUDY_ID/SESSION_ID if it looks like one, else ""."""
    value = (value or "").strip()
    return value if PROLIFIC_ID_RE.match(value) else ""


def new_enrolment_check(
    *,
    expected_study_id: str,
    given_study_id: str,
    linked: Callable[[], bool],
    admit_new: Callable[[], bool] | None,
) -> None:
    """Refuse a new PID (intruders, writers and crowd annotators alike).

    Refused: a link whose STUDY_ID is not the expected Prolific study ID (when one is set),
    a PID that took part in a linked study (`linked`), and a client over its rate limit
    (`admit_new`, asked last so that refused links do not use up the client's allowance).
    """
    if expected_study_id and (given_study_id or "").strip() != expected_study_id:
        raise EnrolmentRefused(EnrolmentRefused.WRONG_STUDY)
    if linked():
        raise EnrolmentRefused(EnrolmentRefused.LINKED)
    if admit_new is not None and not admit_new():
        raise EnrolmentRefused(EnrolmentRefused.THROTTLED)


def new_client_admission(request: HttpRequest) -> Callable[[], bool]:
    """Return the rate limit a new PID from this client meets (`admit_new` of the services).

    A callable, so that the client's allowance is used only by a PID that passed every other
    check (resuming a known PID is never limited).
    """
    return lambda: EnrolmentThrottle().allow_request(request, None)


def entry_link(entry_url: str) -> str:
    """Return an entry URL with Prolific's three URL parameters (the link to paste there)."""
    return f"{entry_url}?{PROLIFIC_URL_PARAMETERS}"


def prolific_completion_url(completion_code: str) -> str:
    """Return the Prolific URL that records a completed submission with this code."""
    return PROLIFIC_COMPLETE_URL.format(code=completion_code)


@dataclass(frozen=True)
class ResumeCookie:
    """The signed cookie that remembers a crowd member's token for one entry URL.

    Opening the entry URL again without the Prolific query string (a bookmark, a copied
    link) then resumes them. A signed cookie rather than the session: crowd members are not
    users, and this saves the session table a write per enrolment. It is sent back to the
    entry URL only, and HttpOnly.
    """

    prefix: str
    salt: str

    def name(self, slug: str) -> str:
        """Return the cookie's name for the study or project `slug`."""
        return f"{self.prefix}{slug}"

    def token(self, request: HttpRequest, *, slug: str) -> str:
        """Return the token the browser keeps for `slug` ("" without a valid cookie)."""
        return request.get_signed_cookie(self.name(slug), default="", salt=self.salt)

    def keep(self, request: HttpRequest, response: HttpResponse, *, slug: str, token: str) -> None:
        """Make the browser keep `token` for the entry URL `request` was made to."""
        response.set_signed_cookie(
            self.name(slug),
            token,
            salt=self.salt,
            max_age=settings.SESSION_COOKIE_AGE,
            path=request.path,
            secure=settings.SESSION_COOKIE_SECURE or request.is_secure(),
            httponly=True,
            samesite="Lax",
        )


PARTICIPANT_RESUME = ResumeCookie(prefix="intruder_resume_", salt="intruder.participant.resume")
ANNOTATOR_RESUME = ResumeCookie(prefix="intruder_annotate_", salt="intruder.annotation.resume")

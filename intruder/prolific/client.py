"""A small typed client of Prolific's API v1 (https://docs.prolific.com/api-reference).

The token stays on the server: it comes from `PROLIFIC_API_TOKEN` (settings or environment),
is sent only in the Authorization header and is never printed, logged or rendered. Every
call has a timeout; 429 and 5xx answers (and network errors) are retried with exponential
back-off, honouring Retry-After; 401/403/404 raise at once with a message saying what to fix.
With `dry_run=True` nothing is sent: each call is printed (method, URL, body) instead.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from http_retrying import retrying_transport
from intruder.exceptions import IntruderError

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.prolific.com/api/v1/"
API_VERSION = "v1 (docs.prolific.com/api-reference, read 2026-11-25)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_SECONDS = 30.0

# Submission statuses (Prolific's names) after which a participant holds nothing.
RELEASING_STATUSES = frozenset({"RETURNED", "TIMED-OUT", "REJECTED"})


class ProlificError(IntruderError):
    """A Prolific call failed; `status` is the HTTP status (0 when none came back)."""

    status_code = 502  # Prolific failed, not the request

    def __init__(self, message: str, *, status: int = 0, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class ProlificAuthError(ProlificError):
    """401/403: the token is missing, wrong, revoked, or lacks access to this resource."""


class ProlificNotFound(ProlificError):
    """404: the study, submission or bonus does not exist (or not in this workspace)."""

    status_code = 404


class ProlificUnavailable(ProlificError):
    """Prolific did not answer usefully after every retry (429, 5xx, timeouts)."""

    status_code = 503


class ProlificNotConfigured(ProlificError):
    """No API token is set: the platform works as without Prolific (links pasted by hand)."""

    status_code = 503


@dataclass(frozen=True)
class Submission:
    """The parts of a Prolific submission the platform uses."""

    id: str
    participant_id: str
    study_id: str
    status: str
    started_at: str = ""
    completed_at: str = ""
    time_taken: int | None = None

    @classmethod
    def from_api(cls, data: dict[str, Any], *, study_id: str = "") -> Submission:
        return cls(
            id=str(data.get("id", "")),
            participant_id=str(data.get("participant_id") or data.get("participant") or ""),
            study_id=str(data.get("study_id") or study_id),
            status=str(data.get("status", "")),
            started_at=str(data.get("started_at") or ""),
            completed_at=str(data.get("completed_at") or ""),
            time_taken=data.get("time_taken"),
        )


@dataclass(frozen=True)
class StudyDraft:
    """What the platform sends to create a Prolific study (a draft until published)."""

    name: str
    internal_name: str
    description: str
    external_study_url: str
    completion_code: str
    completion_action: str  # "AUTOMATICALLY_APPROVE" or "MANUALLY_REVIEW"
    total_available_places: int
    reward: int  # in the workspace currency's minor unit (pence, cents)
    estimated_completion_time: int  # minutes
    device_compatibility: tuple[str, ...] = ("desktop",)

    def payload(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "internal_name": self.internal_name,
            "description": self.description,
            "external_study_url": self.external_study_url,
            "prolific_id_option": "url_parameters",
            "completion_codes": [
                {
                    "code": self.completion_code,
                    "code_type": "COMPLETED",
                    "actions": [{"action": self.completion_action}],
                }
            ],
            "total_available_places": self.total_available_places,
            "reward": self.reward,
            "estimated_completion_time": self.estimated_completion_time,
            "device_compatibility": list(self.device_compatibility),
        }


@dataclass
class ProlificClient:
    """Calls Prolific's API; see the module docstring for the token, retry and dry-run rules."""

    token: str
    base_url: str = DEFAULT_BASE_URL
    timeout: float = 10.0
    max_retries: int = 4
    backoff: float = 0.5
    dry_run: bool = False
    echo: Callable[[str], None] = print
    transport: httpx.BaseTransport | None = None
    sleep: Callable[[float], None] = time.sleep
    _http: httpx.Client | None = field(default=None, init=False, repr=False)

    def __repr__(self) -> str:  # never show the token
        return f"ProlificClient(base_url={self.base_url!r}, dry_run={self.dry_run})"

    # --- transport -------------------------------------------------------------------------

    def _client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(
                base_url=self.base_url,
                timeout=self.timeout,
                transport=retrying_transport(
                    statuses=RETRY_STATUSES,
                    retries=self.max_retries,
                    backoff=self.backoff,
                    max_wait=MAX_RETRY_AFTER_SECONDS,
                    sleep=self.sleep,
                    on_retry=_log_retry,
                    transport=self.transport,
                ),
                headers={"Authorization": f"Token {self.token}", "Accept": "application/json"},
            )
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def request(
        self, method: str, path: str, *, json_body: Any = None, params: dict | None = None
    ) -> httpx.Response | None:
        """Send one call (retried on 429/5xx/network errors); None in dry-run mode."""
        if self.dry_run:
            url = self.base_url.rstrip("/") + "/" + path.lstrip("/")
            query = f"?{httpx.QueryParams(params)}" if params else ""
            body = f" {json.dumps(json_body, sort_keys=True)}" if json_body is not None else ""
            self.echo(f"[dry-run] {method} {url}{query}{body}")
            return None
        if not self.token:
            raise ProlificNotConfigured("No Prolific API token is set (PROLIFIC_API_TOKEN).")
        tries = f"after {self.max_retries + 1} tries"
        try:
            response = self._client().request(method, path, json=json_body, params=params)
        except httpx.TransportError as error:  # timeouts, refused connections, every retry
            last = f"{type(error).__name__}: {error}"
        else:
            if response.status_code not in RETRY_STATUSES:
                return self._check(response, method=method, path=path)
            last = f"HTTP {response.status_code}"
        raise ProlificUnavailable(
            f"Prolific did not answer {method} {path} {tries} ({last}). Nothing was lost: "
            "try again later."
        )

    def _check(self, response: httpx.Response, *, method: str, path: str) -> httpx.Response:
        status = response.status_code
        if status < 400:
            return response
        body = _body(response)
        if status == 401:
            raise ProlificAuthError(
                "Prolific refused the API token (401): set a valid PROLIFIC_API_TOKEN "
                "(Prolific > Settings > API tokens).",
                status=status,
                body=body,
            )
        if status == 403:
            raise ProlificAuthError(
                f"Prolific forbids {method} {path} for this token (403): the token's "
                "workspace must own the study.",
                status=status,
                body=body,
            )
        if status == 404:
            raise ProlificNotFound(
                f"Prolific has no such resource: {method} {path} (404). Check the study's "
                "Prolific study ID.",
                status=status,
                body=body,
            )
        raise ProlificError(
            f"Prolific answered {status} to {method} {path}: {answer_text(body)}",
            status=status,
            body=body,
        )

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self.request(method, path, **kwargs)
        if response is None:
            return {"dry_run": True}
        return _body(response) if response.content else {}

    # --- studies -----------------------------------------------------------------------------

    def study_create(self, draft: StudyDraft) -> dict[str, Any]:
        """Create a draft study; returns Prolific's study (its `id` is the STUDY_ID)."""
        return self._json("POST", "studies/", json_body=draft.payload())

    def study_get(self, study_id: str) -> dict[str, Any]:
        return self._json("GET", f"studies/{study_id}/")

    def study_transition(self, study_id: str, action: str) -> dict[str, Any]:
        """PUBLISH a draft, PAUSE, START (resume) or STOP a study."""
        return self._json("POST", f"studies/{study_id}/transition/", json_body={"action": action})

    # --- submissions ------------------------------------------------------------------------

    def submissions_list(self, study_id: str) -> list[Submission]:
        """Return every submission of a study (follows Prolific's pagination)."""
        found: list[Submission] = []
        page = 1
        while True:
            data = self._json("GET", f"studies/{study_id}/submissions/", params={"page": page})
            rows = data.get("results", [])
            found += [Submission.from_api(row, study_id=study_id) for row in rows]
            if not (data.get("_links") or {}).get("next", {}).get("href"):
                return found
            page += 1

    def submission_get(self, submission_id: str) -> Submission | None:
        data = self._json("GET", f"submissions/{submission_id}/")
        return None if data.get("dry_run") else Submission.from_api(data)

    def submission_approve(self, submission_id: str) -> dict[str, Any]:
        return self._json(
            "POST", f"submissions/{submission_id}/transition/", json_body={"action": "APPROVE"}
        )

    def submission_reject(
        self, submission_id: str, *, message: str, category: str = "OTHER"
    ) -> dict[str, Any]:
        """Reject a submission; Prolific requires a message (100+ characters) and category."""
        return self._json(
            "POST",
            f"submissions/{submission_id}/transition/",
            json_body={"action": "REJECT", "message": message, "rejection_category": category},
        )

    # --- bonuses ----------------------------------------------------------------------------

    def bonus_setup(self, study_id: str, rows: list[tuple[str, float]]) -> dict[str, Any]:
        """Set up (not yet pay) bonuses: rows of (participant ID, amount in major units)."""
        return self._json(
            "POST",
            "submissions/bonus-payments/",
            json_body={"study_id": study_id, "csv_bonuses": bonus_csv(rows)},
        )

    def bonus_pay(self, bonus_id: str) -> dict[str, Any]:
        return self._json("POST", f"bulk-bonus-payments/{bonus_id}/pay/")

    # --- webhooks ---------------------------------------------------------------------------

    def hook_secret_create(self, workspace_id: str) -> dict[str, Any]:
        return self._json("POST", "hooks/secrets/", json_body={"workspace_id": workspace_id})

    def hook_subscribe(
        self, *, workspace_id: str, event_type: str, target_url: str
    ) -> tuple[dict[str, Any], str]:
        """Create a subscription; return it and the X-Hook-Secret that confirms it."""
        body = {"workspace_id": workspace_id, "event_type": event_type, "target_url": target_url}
        response = self.request("POST", "hooks/subscriptions/", json_body=body)
        if response is None:
            return {"dry_run": True}, ""
        return _body(response), response.headers.get("X-Hook-Secret", "")

    def hook_confirm(self, subscription_id: str, hook_secret: str) -> dict[str, Any]:
        return self._json(
            "POST", f"hooks/subscriptions/{subscription_id}/", json_body={"secret": hook_secret}
        )


def bonus_csv(rows: list[tuple[str, float]]) -> str:
    """Return Prolific's bonus CSV: "participant ID,amount" lines, amounts in major units."""
    return "\n".join(f"{pid},{amount:.2f}" for pid, amount in rows)


def answer_text(answer: Any) -> str:
    """Return Prolific's answer (or its error) as readable text, not a Python dict."""
    if isinstance(answer, dict):
        error = answer.get("error")
        if error is not None:
            return answer_text(error.get("detail", error) if isinstance(error, dict) else error)
        return "; ".join(f"{k}: {answer_text(v)}" for k, v in answer.items())
    if isinstance(answer, list):
        return ", ".join(answer_text(v) for v in answer)
    return "" if answer is None else str(answer)


def _log_retry(
    request: httpx.Request | None, failure: httpx.Response | Exception, wait: float
) -> None:
    """Log each retry: the call, why, and the wait (never the token: it is in a header)."""
    why = (
        f"HTTP {failure.status_code}"
        if isinstance(failure, httpx.Response)
        else f"{type(failure).__name__}: {failure}"
    )
    call = f"{request.method} {request.url.path}" if request is not None else "call"
    logger.warning("Prolific %s: %s; retry in %.1fs", call, why, wait)


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text[:500]


def client_from_settings(
    *, dry_run: bool = False, echo: Callable[[str], None] = print, max_retries: int = 4
) -> ProlificClient:
    """Return a client configured from Django settings (PROLIFIC_API_TOKEN, PROLIFIC_API_URL)."""
    from django.conf import settings

    return ProlificClient(
        token=settings.PROLIFIC_API_TOKEN,
        base_url=settings.PROLIFIC_API_URL,
        timeout=settings.PROLIFIC_TIMEOUT_SECONDS,
        dry_run=dry_run,
        echo=echo,
        max_retries=max_retries,
    )


def prolific_enabled() -> bool:
    """Return whether a Prolific API token is configured (otherwise: links pasted by hand)."""
    from django.conf import settings

    return bool(settings.PROLIFIC_API_TOKEN)

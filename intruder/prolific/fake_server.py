"""A local fake of Prolific's API v1 and its webhook deliveries, for tests and benchmarks.

Prolific cannot be reached from the test machines, so this serves the documented endpoints
on loopback (stdlib `ThreadingHTTPServer`) with the documented behaviour, and nothing more:
docs.prolific.com/api-reference as read on 2026-11-25 (API v1).

- `Authorization: Token <token>`; a wrong token gets 401, another workspace's study (and its
  submissions and bonuses) 403.
- Studies: POST /studies/ creates an UNPUBLISHED draft (name, external_study_url with the
  {{%PROLIFIC_PID%}} parameters, completion_codes, places, reward and estimated time are
  required); POST /studies/{id}/transition/ with PUBLISH, PAUSE, START or STOP.
- Submissions: GET /studies/{id}/submissions/ (paginated), GET /submissions/{id}/,
  POST /submissions/{id}/transition/ APPROVE or REJECT (a rejection needs a message of 100+
  characters and a rejection_category; only AWAITING REVIEW submissions move). The platform
  approves one submission at a time (its bulk-approve answers one sentence for all), so
  POST /submissions/bulk-approve/ is not served.
- Bonuses: POST /submissions/bonus-payments/ sets up (csv "pid,amount" lines) and
  POST /bulk-bonus-payments/{id}/pay/ pays once; paying again is a 400. A bonus naming a
  participant without a submission in the study is a 400, as on Prolific.
- Webhooks: POST /hooks/secrets/, POST /hooks/subscriptions/ (answers with X-Hook-Secret),
  POST /hooks/subscriptions/{id}/ confirms with {"secret": ...}. Deliveries are signed
  (X-Prolific-Request-Signature over X-Prolific-Request-Timestamp + body) and carry X-Event-ID
  and X-Timestamp; `deliveries()` builds them so tests can duplicate, reorder, delay or
  corrupt them the way a real network and Prolific's retries do.
- Fault injection: `fail_next(status, times)` answers the next calls with that status.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import httpx

from intruder.prolific.signing import (
    EVENT_ID_HEADER,
    EVENT_TIME_HEADER,
    HOOK_SECRET_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    sign,
)

API_PREFIX = "/api/v1/"
STUDY_TRANSITIONS = {"PUBLISH": "ACTIVE", "PAUSE": "PAUSED", "START": "ACTIVE", "STOP": "COMPLETED"}
REQUIRED_STUDY_FIELDS = (
    "name",
    "description",
    "external_study_url",
    "completion_codes",
    "total_available_places",
    "reward",
    "estimated_completion_time",
)
URL_PARAMETERS = ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}")


def new_id() -> str:
    """Return a Prolific-style 24-hex-character ID."""
    return secrets.token_hex(12)


@dataclass
class WebhookDelivery:
    """One signed delivery, ready to send (or to tamper with in a test)."""

    event_id: str
    body: bytes
    headers: dict[str, str]


@dataclass
class FakeProlific:
    """The fake's state; `serve()` puts it on a loopback port."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    workspace_id: str = field(default_factory=new_id)
    webhook_secret: str = ""
    studies: dict[str, dict] = field(default_factory=dict)
    submissions: dict[str, dict] = field(default_factory=dict)
    bonuses: dict[str, dict] = field(default_factory=dict)
    payments: list[tuple[str, str, float]] = field(default_factory=list)  # (study, pid, amt)
    # submission -> (message, category) of its rejection, as the participant would see it
    rejections: dict[str, tuple[str, str]] = field(default_factory=dict)
    subscriptions: dict[str, dict] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    page_size: int = 50
    # The sandbox: where every event is delivered, signed, as Prolific's webhooks would.
    deliver_to: str = ""
    # The sandbox controls live under /sandbox/<control_secret>/: a page the researcher
    # opens elsewhere cannot guess their address (and a POST must come from their origin).
    control_secret: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    _senders: list[threading.Thread] = field(default_factory=list)
    _faults: list[int] = field(default_factory=list)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _server: ThreadingHTTPServer | None = None

    # --- running ------------------------------------------------------------------------------

    def serve(self, port: int = 0) -> str:
        """Start serving on 127.0.0.1:`port` (0: any free one) in a daemon thread; return the
        API base URL."""
        fake = self

        class Handler(_Handler):
            state = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self.base_url

    @property
    def base_url(self) -> str:
        assert self._server is not None, "call serve() first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{API_PREFIX}"

    @property
    def origin(self) -> str:
        """Return the fake's own origin (scheme, host and port), as browsers send it."""
        assert self._server is not None, "call serve() first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def controls_path(self) -> str:
        """Return the path of the control page, its secret included."""
        return f"{SANDBOX_PREFIX}{self.control_secret}/"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def fail_next(self, status: int, times: int = 1) -> None:
        with self._lock:
            self._faults += [status] * times

    # --- what participants do on Prolific (test helpers, not API) --------------------------

    def submission_start(self, study_id: str, participant_id: str) -> str:
        """A participant takes a place: an ACTIVE submission; returns its ID (SESSION_ID)."""
        with self._lock:
            submission_id = new_id()
            self.submissions[submission_id] = {
                "id": submission_id,
                "participant_id": participant_id,
                "study_id": study_id,
                "status": "ACTIVE",
                "started_at": _now_iso(),
                "completed_at": None,
                "time_taken": None,
            }
            self._event("submission.status.change", self.submissions[submission_id])
            return submission_id

    def submission_set_status(self, submission_id: str, status: str) -> dict:
        """Prolific changes a submission (RETURNED, TIMED-OUT, AWAITING REVIEW...)."""
        with self._lock:
            row = self.submissions[submission_id]
            row["status"] = status
            if status == "AWAITING REVIEW":
                row["completed_at"] = _now_iso()
            return self._event("submission.status.change", row)

    def _event(self, event_type: str, resource: dict) -> dict:
        if event_type == "submission.status.change":
            payload = {
                "event_type": event_type,
                "resource_id": resource["id"],
                "status": resource["status"],
                "participant_id": resource["participant_id"],
                "study_id": resource["study_id"],
            }
        else:
            payload = {
                "event_type": event_type,
                "resource_id": resource["id"],
                "status": resource["status"],
            }
        event = {
            "event_id": uuid.uuid4().hex,
            "occurred_at": datetime.now(UTC).isoformat(),
            "payload": payload,
        }
        self.events.append(event)
        if self.deliver_to:
            sender = threading.Thread(target=self._deliver, args=(event,), daemon=True)
            self._senders = [t for t in self._senders if t.is_alive()] + [sender]
            sender.start()
        return event

    def _deliver(self, event: dict) -> None:
        """Send one event to the sandbox's site, retried a few times as Prolific does."""
        for attempt in range(3):
            try:
                with httpx.Client(timeout=10) as http:
                    if self.send(self.delivery(event), self.deliver_to, http=http) < 500:
                        return
            except httpx.HTTPError:
                pass
            time.sleep(0.5 * 2**attempt)

    def wait_deliveries(self, timeout: float = 30) -> None:
        """Wait until every event sent so far was delivered (or given up)."""
        for sender in list(self._senders):
            sender.join(timeout)

    # --- deliveries ---------------------------------------------------------------------------

    def delivery(self, event: dict, *, secret: str | None = None) -> WebhookDelivery:
        """Sign one event the way Prolific does (a retry is the same event signed anew)."""
        body = json.dumps(event["payload"]).encode()
        timestamp = str(int(time.time()))
        signature = sign(secret=secret or self.webhook_secret, timestamp=timestamp, body=body)
        return WebhookDelivery(
            event_id=event["event_id"],
            body=body,
            headers={
                "Content-Type": "application/json",
                SIGNATURE_HEADER: signature,
                TIMESTAMP_HEADER: timestamp,
                EVENT_ID_HEADER: event["event_id"],
                EVENT_TIME_HEADER: event["occurred_at"],
            },
        )

    def delivery_again(self, delivery: WebhookDelivery) -> WebhookDelivery:
        """Prolific's retry of a delivery: the same body and X-Event-ID, signed anew.

        A delivery that was tampered with or forged stays as it was (its signature is bad).
        """
        timestamp = str(int(time.time()))
        signature = sign(secret=self.webhook_secret, timestamp=timestamp, body=delivery.body)
        if delivery.headers.get(SIGNATURE_HEADER) != sign(
            secret=self.webhook_secret,
            timestamp=delivery.headers.get(TIMESTAMP_HEADER, ""),
            body=delivery.body,
        ):
            return delivery
        headers = {**delivery.headers, TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature}
        return WebhookDelivery(event_id=delivery.event_id, body=delivery.body, headers=headers)

    def send(self, delivery: WebhookDelivery, target_url: str, *, http: httpx.Client) -> int:
        """POST a delivery to a subscriber; return the status (Prolific retries non-2xx)."""
        return http.post(target_url, content=delivery.body, headers=delivery.headers).status_code

    # --- the API --------------------------------------------------------------------------------

    def handle(self, method: str, path: str, headers: dict, body: Any) -> tuple[int, Any, dict]:
        with self._lock:
            self.calls.append((method, path))
            if self._faults:
                status = self._faults.pop(0)
                extra = {"Retry-After": "0"} if status == 429 else {}
                return status, {"error": "injected"}, extra
            if headers.get("authorization") != f"Token {self.token}":
                return 401, {"error": {"detail": "Invalid token."}}, {}
            for pattern, allowed, handler in ROUTES:
                match = re.fullmatch(pattern, path)
                if match:
                    if method != allowed:
                        return 405, {"error": "method not allowed"}, {}
                    return handler(self, body or {}, *match.groups())
            return 404, {"error": {"detail": "Not found."}}, {}

    def _study_create(self, body: dict) -> tuple[int, Any, dict]:
        missing = [f for f in REQUIRED_STUDY_FIELDS if body.get(f) in (None, "", [])]
        if missing:
            return 400, {"error": {"detail": {f: ["This field is required."] for f in missing}}}, {}
        url = str(body["external_study_url"])
        if not all(p in url for p in URL_PARAMETERS):
            return 400, {"error": {"detail": {"external_study_url": ["URL parameters"]}}}, {}
        study = {**body, "id": new_id(), "status": "UNPUBLISHED", "workspace": self.workspace_id}
        self.studies[study["id"]] = study
        return 201, study, {}

    def study_add_foreign(self, **fields: Any) -> str:
        """A study of another workspace (another researcher's): this token may not touch it."""
        with self._lock:
            study = {"id": new_id(), "status": "ACTIVE", "workspace": new_id(), **fields}
            self.studies[study["id"]] = study
            return study["id"]

    def _own_study(self, study_id: str) -> tuple[dict | None, tuple[int, Any, dict] | None]:
        """Return the token's study, or the answer Prolific gives for one it may not see."""
        study = self.studies.get(study_id)
        if study is None:
            return None, (404, {"error": {"detail": "Not found."}}, {})
        if study.get("workspace", self.workspace_id) != self.workspace_id:
            return None, (403, {"error": {"detail": "You do not have permission."}}, {})
        return study, None

    def _study_get(self, body: dict, study_id: str) -> tuple[int, Any, dict]:
        study, refused = self._own_study(study_id)
        if refused:
            return refused
        counts: dict[str, int] = {}
        for sub in self.submissions.values():
            if sub["study_id"] == study_id:
                counts[sub["status"]] = counts.get(sub["status"], 0) + 1
        return 200, {**study, "submissions_count_by_status": counts}, {}

    def _study_transition(self, body: dict, study_id: str) -> tuple[int, Any, dict]:
        study, refused = self._own_study(study_id)
        if refused:
            return refused
        action = body.get("action")
        if action not in STUDY_TRANSITIONS:
            return 400, {"error": {"detail": f"Unknown action {action!r}."}}, {}
        if action == "PUBLISH" and study["status"] != "UNPUBLISHED":
            return 400, {"error": {"detail": "Only a draft can be published."}}, {}
        study["status"] = STUDY_TRANSITIONS[action]
        self._event("study.status.change", study)
        return 200, study, {}

    def _submissions_list(self, body: dict, study_id: str) -> tuple[int, Any, dict]:
        _, refused = self._own_study(study_id)
        if refused:
            return refused
        rows = [s for s in self.submissions.values() if s["study_id"] == study_id]
        page = int((body or {}).get("page", 1))
        chunk = rows[(page - 1) * self.page_size : page * self.page_size]
        more = page * self.page_size < len(rows)
        links = {"next": {"href": f"?page={page + 1}" if more else None}}
        return 200, {"results": chunk, "_links": links, "meta": {"count": len(rows)}}, {}

    def _own_submission(self, submission_id: str) -> tuple[dict | None, tuple | None]:
        sub = self.submissions.get(submission_id)
        if sub is None:
            return None, (404, {"error": {"detail": "Not found."}}, {})
        _, refused = self._own_study(sub["study_id"])
        return (None, refused) if refused else (sub, None)

    def _submission_get(self, body: dict, submission_id: str) -> tuple[int, Any, dict]:
        sub, refused = self._own_submission(submission_id)
        return refused or (200, sub, {})

    def _submission_transition(self, body: dict, submission_id: str) -> tuple[int, Any, dict]:
        sub, refused = self._own_submission(submission_id)
        if refused:
            return refused
        action = body.get("action")
        if sub["status"] != "AWAITING REVIEW":
            return 400, {"error": {"detail": f"Submission is {sub['status']}."}}, {}
        if action == "APPROVE":
            sub["status"] = "APPROVED"
        elif action == "REJECT":
            if len(str(body.get("message", ""))) < 100 or not body.get("rejection_category"):
                return 400, {"error": {"detail": "message (100+ chars) and category."}}, {}
            sub["status"] = "REJECTED"
            self.rejections[submission_id] = (body["message"], body["rejection_category"])
        else:
            return 400, {"error": {"detail": f"Unknown action {action!r}."}}, {}
        self._event("submission.status.change", sub)
        return 200, sub, {}

    def _participants_of(self, study_id: str) -> set[str]:
        """Return the participant IDs with a submission in the study."""
        return {
            sub["participant_id"]
            for sub in self.submissions.values()
            if sub["study_id"] == study_id
        }

    def _bonus_setup(self, body: dict) -> tuple[int, Any, dict]:
        study_id = body.get("study_id", "")
        _, refused = self._own_study(str(study_id))
        if refused:
            return refused
        rows = []
        for line in str(body.get("csv_bonuses", "")).splitlines():
            pid, _, amount = line.partition(",")
            try:
                rows.append((pid.strip(), float(amount)))
            except ValueError:
                return 400, {"error": {"detail": f"Bad bonus line {line!r}."}}, {}
        strangers = sorted({pid for pid, _ in rows} - self._participants_of(str(study_id)))
        if strangers:  # Prolific pays bonuses to the study's own submissions only
            detail = f"Not participants of this study: {', '.join(strangers)}."
            return 400, {"error": {"detail": detail}}, {}
        bonus = {"id": new_id(), "study": study_id, "rows": rows, "paid": False}
        bonus["amount"] = round(sum(a for _, a in rows), 2)
        self.bonuses[bonus["id"]] = bonus
        return 201, {"id": bonus["id"], "study": study_id, "amount": bonus["amount"]}, {}

    def _bonus_pay(self, body: dict, bonus_id: str) -> tuple[int, Any, dict]:
        bonus = self.bonuses.get(bonus_id)
        if bonus is None:
            return 404, {"error": {"detail": "Not found."}}, {}
        if bonus["paid"]:
            return 400, {"error": {"detail": "This bonus has already been paid."}}, {}
        bonus["paid"] = True
        self.payments += [(bonus["study"], pid, amount) for pid, amount in bonus["rows"]]
        return 202, "", {}

    def _secret_create(self, body: dict) -> tuple[int, Any, dict]:
        self.webhook_secret = secrets.token_urlsafe(32)
        value = {"id": new_id(), "value": self.webhook_secret, "workspace_id": self.workspace_id}
        return 201, value, {}

    def _subscribe(self, body: dict) -> tuple[int, Any, dict]:
        if not body.get("target_url") or not body.get("event_type"):
            return 400, {"error": {"detail": "target_url and event_type are required."}}, {}
        sub = {
            "id": new_id(),
            "event_type": body["event_type"],
            "target_url": body["target_url"],
            "workspace_id": body.get("workspace_id", ""),
            "is_enabled": False,
            "hook_secret": secrets.token_urlsafe(16),
        }
        self.subscriptions[sub["id"]] = sub
        public = {k: v for k, v in sub.items() if k != "hook_secret"}
        return 201, {"results": [public], **public}, {HOOK_SECRET_HEADER: sub["hook_secret"]}

    def _confirm(self, body: dict, subscription_id: str) -> tuple[int, Any, dict]:
        sub = self.subscriptions.get(subscription_id)
        if sub is None:
            return 404, {"error": {"detail": "Not found."}}, {}
        if body.get("secret") != sub["hook_secret"]:
            return 400, {"error": {"detail": "Wrong X-Hook-Secret."}}, {}
        sub["is_enabled"] = True
        return 200, {k: v for k, v in sub.items() if k != "hook_secret"}, {}


ROUTES = [
    (r"studies/", "POST", FakeProlific._study_create),
    (r"studies/(\w+)/", "GET", FakeProlific._study_get),
    (r"studies/(\w+)/transition/", "POST", FakeProlific._study_transition),
    (r"studies/(\w+)/submissions/", "GET", FakeProlific._submissions_list),
    (r"submissions/bonus-payments/", "POST", FakeProlific._bonus_setup),
    (r"submissions/(\w+)/", "GET", FakeProlific._submission_get),
    (r"submissions/(\w+)/transition/", "POST", FakeProlific._submission_transition),
    (r"bulk-bonus-payments/(\w+)/pay/", "POST", FakeProlific._bonus_pay),
    (r"hooks/secrets/", "POST", FakeProlific._secret_create),
    (r"hooks/subscriptions/", "POST", FakeProlific._subscribe),
    (r"hooks/subscriptions/(\w+)/", "POST", FakeProlific._confirm),
]


class _Handler(BaseHTTPRequestHandler):
    state: FakeProlific

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _dispatch(self, method: str) -> None:
        raw_path, _, query = self.path.partition("?")
        if raw_path.startswith(SANDBOX_PREFIX):
            secret, _, rest = raw_path[len(SANDBOX_PREFIX) :].partition("/")
            if not hmac.compare_digest(secret.encode(), self.state.control_secret.encode()):
                self._send(404, {"error": "not a sandbox control"}, {})
                return
            if method == "POST" and not self._same_origin():
                self._send(403, {"error": "a sandbox control is sent from its own page"}, {})
                return
            self._sandbox(method, rest)
            return
        if not raw_path.startswith(API_PREFIX):
            self._send(404, {"error": "not the API"}, {})
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            self._send(400, {"error": "body is not JSON"}, {})
            return
        if method == "GET" and query:
            body = dict(part.split("=", 1) for part in query.split("&") if "=" in part)
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, payload, extra = self.state.handle(
            method, raw_path[len(API_PREFIX) :], headers, body
        )
        self._send(status, payload, extra)

    def _send(self, status: int, payload: Any, extra: dict) -> None:
        data = json.dumps(payload).encode() if payload != "" else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _same_origin(self) -> bool:
        """Whether a POST comes from the control page: its Origin (or, without one, its
        Referer) is the fake's own. Browsers send Origin with every form POST."""
        origin = self.headers.get("Origin") or ""
        if not origin:
            referer = urlsplit(self.headers.get("Referer") or "")
            origin = f"{referer.scheme}://{referer.netloc}" if referer.netloc else ""
        return bool(origin) and origin == self.state.origin

    def _sandbox(self, method: str, path: str) -> None:
        """The rehearsal controls: a page, and what simulated participants do."""
        if method == "GET" and path == "":
            page = sandbox_page(self.state).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        start = re.fullmatch(r"start/(\w+)/", path)
        change = re.fullmatch(r"submission/(\w+)/([a-z-]+)/", path)
        if method == "POST" and start and start[1] in self.state.studies:
            self.state.submission_start(start[1], new_id())
        elif method == "POST" and change and change[2] in SANDBOX_ACTIONS:
            if change[1] not in self.state.submissions:
                self._send(404, {"error": "no such submission"}, {})
                return
            self.state.submission_set_status(change[1], SANDBOX_ACTIONS[change[2]][0])
        else:
            self._send(404, {"error": "not a sandbox control"}, {})
            return
        self.send_response(303)
        self.send_header("Location", self.state.controls_path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")


SANDBOX_PREFIX = "/sandbox/"
# What a simulated participant can do in the sandbox: (the status Prolific then reports, label).
SANDBOX_ACTIONS = {
    "complete": ("AWAITING REVIEW", "completes (enters the code)"),
    "return": ("RETURNED", "returns the study"),
    "time-out": ("TIMED-OUT", "times out"),
}


# A phone (390 px) shows the page without sideways scrolling: long IDs and URLs wrap, each
# row's buttons wrap under each other, and a table wider than the screen scrolls in its box.
SANDBOX_CSS = (
    "body{font-family:system-ui,sans-serif;margin:1rem;max-width:60rem;line-height:1.4}"
    "code{overflow-wrap:anywhere}h1{font-size:1.3rem}h2{font-size:1.1rem}"
    ".scroll{overflow-x:auto}table{border-collapse:collapse}"
    "td,th{padding:.3rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
    "form{display:inline-block;margin:.15rem .3rem .15rem 0}button{padding:.35rem .6rem}"
    "@media (max-width:600px){table,tbody,tr,td,th{display:block}tr:first-child{display:none}"
    "tr{border-bottom:1px solid #ccc;padding:.4rem 0}td{border:0;padding:.1rem 0}}"
)


def sandbox_page(fake: FakeProlific) -> str:
    """The sandbox's control page: each study, its submissions, and what to make happen."""
    from html import escape

    def button(url: str, label: str) -> str:
        return (
            f'<form method="post" action="{escape(url)}">'
            f'<button type="submit">{escape(label)}</button></form>'
        )

    prefix = fake.controls_path
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>Prolific sandbox</title><style>{SANDBOX_CSS}</style></head><body>",
        "<h1>Prolific sandbox (a rehearsal: nothing reaches Prolific, nobody is paid)</h1>",
        f"<p>API base: <code>{escape(fake.base_url)}</code>. Webhooks go to "
        f"<code>{escape(fake.deliver_to or '(nowhere)')}</code>.</p>",
    ]
    with fake._lock:
        studies = [dict(s) for s in fake.studies.values()]
        submissions = [dict(s) for s in fake.submissions.values()]
    if not studies:
        parts.append("<p>No study yet: create the Prolific draft on the study's Prolific page.</p>")
    for study in studies:
        parts.append(
            f"<h2>{escape(str(study.get('name', '')))} <small>{escape(study['id'])}: "
            f"{escape(study['status'])}</small></h2>"
        )
        if study["status"] == "ACTIVE":
            parts.append(button(f"{prefix}start/{study['id']}/", "A participant starts"))
        else:
            parts.append("<p>Publish (or resume) the study to let participants start.</p>")
        parts.append(
            "<div class='scroll'><table><tr><th>Participant</th><th>Status</th><th>Link</th>"
            "<th></th></tr>"
        )
        for sub in (s for s in submissions if s["study_id"] == study["id"]):
            link = (
                str(study.get("external_study_url", ""))
                .replace("{{%PROLIFIC_PID%}}", sub["participant_id"])
                .replace("{{%STUDY_ID%}}", study["id"])
                .replace("{{%SESSION_ID%}}", sub["id"])
            )
            actions = ""
            if sub["status"] == "ACTIVE":
                actions = " ".join(
                    button(f"{prefix}submission/{sub['id']}/{action}/", label)
                    for action, (_, label) in SANDBOX_ACTIONS.items()
                )
            parts.append(
                f"<tr><td><code>{escape(sub['participant_id'])}</code></td>"
                f"<td>{escape(sub['status'])}</td>"
                f"<td><a href='{escape(link)}' target='_blank'>open as this participant</a></td>"
                f"<td>{actions}</td></tr>"
            )
        parts.append("</table></div>")
    parts.append("</body></html>")
    return "".join(parts)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()

"""The sandbox: the fake Prolific on a chosen loopback port, the site pointed at it, and the
controls that make simulated participants start, return, time out and complete (issue 37)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable

import httpx
import pytest
from django.db import connection
from django.urls import reverse

from intruder.models import Participant
from intruder.prolific.client import client_from_settings
from intruder.prolific.fake_server import SANDBOX_PREFIX
from intruder.prolific.models import ProlificStudyState, ProlificSubmission
from intruder.prolific.sandbox import controls_url, sandbox_start
from intruder.prolific.services import study_draft_create, study_transition
from tests.intruder.factories import logged_in, make_study, make_texts


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class OneAtATime:
    """The live server's app answering one request at a time.

    On SQLite the live server's request threads share the test's in-memory connection, and
    the fake Prolific delivers each event from a thread of its own: two deliveries at once
    broke that connection's savepoints ("cannot open savepoint - SQL statements in
    progress"), failing the webhook and every query after it (seen once under load).
    """

    def __init__(self, app: Callable) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        with self.lock:
            return self.app(environ, start_response)


@pytest.fixture
def sandbox(settings, live_server):
    httpd = live_server.thread.httpd
    if connection.vendor == "sqlite" and not isinstance(httpd.get_app(), OneAtATime):
        httpd.set_app(OneAtATime(httpd.get_app()))
    port = _free_port()
    fake = sandbox_start(port=port, site_url=live_server.url)
    yield fake, port, live_server.url
    fake.stop()


@pytest.mark.django_db(transaction=True)
def test_the_sandbox_serves_on_the_chosen_port_and_the_site_talks_to_it(sandbox, settings):
    fake, port, _ = sandbox
    assert fake.base_url == f"http://127.0.0.1:{port}/api/v1/"
    assert fake.base_url == settings.PROLIFIC_API_URL
    assert fake.token == settings.PROLIFIC_API_TOKEN
    assert fake.webhook_secret == settings.PROLIFIC_WEBHOOK_SECRET
    assert controls_url(fake) == f"http://127.0.0.1:{port}{SANDBOX_PREFIX}{fake.control_secret}/"
    study = make_study()
    page = logged_in(study.owner).get(reverse("researcher-prolific", kwargs={"slug": study.slug}))
    assert 'data-testid="prolific-sandbox"' in page.content.decode()
    assert fake.base_url in page.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_whole_cycle_can_be_rehearsed_from_the_controls(sandbox):
    fake, _, site = sandbox
    study = make_study(items_per_participant=1, judgments_per_text=3)
    make_texts(study=study, count=2)
    client = client_from_settings()
    entry = site + reverse("participant-entry", kwargs={"slug": study.slug})
    study_draft_create(
        study=study, client=client, entry_url=entry, places=3, reward_minor=50, estimated_minutes=5
    )
    study_transition(study=study, client=client, action="publish")
    study.refresh_from_db()
    fake.wait_deliveries()
    assert ProlificStudyState.objects.get(study=study).status == "ACTIVE"
    controls = controls_url(fake)
    # The control page's own origin, as a browser sends it with each form POST.
    with httpx.Client(timeout=30, follow_redirects=False, headers={"Origin": fake.origin}) as http:
        page = http.get(controls).text
        assert "A participant starts" in page and study.prolific_study_id in page
        for _ in range(3):
            assert http.post(f"{controls}start/{study.prolific_study_id}/").status_code == 303
        fake.wait_deliveries()
        subs = sorted(fake.submissions.values(), key=lambda s: s["started_at"])
        assert ProlificSubmission.objects.filter(study=study, status="ACTIVE").count() == 3
        # Each simulated participant opens their link: the site admits them (Prolific, here
        # the sandbox, confirms the session).
        for sub in subs:
            link = (
                f"{entry}?PROLIFIC_PID={sub['participant_id']}"
                f"&STUDY_ID={study.prolific_study_id}&SESSION_ID={sub['id']}"
            )
            assert http.get(link).status_code == 302
        assert Participant.objects.filter(study=study).count() == 3
        for sub, action in zip(subs, ("return", "time-out", "complete"), strict=True):
            url = f"{controls}submission/{sub['id']}/{action}/"
            assert http.post(url).status_code == 303
        fake.wait_deliveries()
        statuses = dict(
            Participant.objects.filter(study=study).values_list("prolific_pid", "status")
        )
        assert statuses[subs[0]["participant_id"]] == Participant.Status.RETURNED
        assert statuses[subs[1]["participant_id"]] == Participant.Status.TIMED_OUT
        assert (
            ProlificSubmission.objects.get(submission_id=subs[2]["id"]).status == "AWAITING REVIEW"
        )
        # Nonsense controls are refused and change nothing.
        assert http.post(f"{controls}submission/{subs[2]['id']}/approve/").status_code == 404
        assert http.post(f"{controls}start/nosuchstudy/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_controls_need_their_secret_and_their_own_origin(sandbox):
    """Another page the researcher opens (another origin, or none) cannot drive the controls,
    nor can anyone who does not know the address's secret."""
    fake, port, _ = sandbox
    fake.studies["s1"] = {"id": "s1", "status": "ACTIVE"}
    controls = controls_url(fake)
    guessed = f"http://127.0.0.1:{port}{SANDBOX_PREFIX}"
    with httpx.Client(timeout=30, follow_redirects=False) as http:
        assert http.get(guessed).status_code == 404
        assert http.get(f"{guessed}wrong-secret/").status_code == 404
        assert http.post(f"{guessed}start/s1/", headers={"Origin": fake.origin}).status_code == 404
        assert http.post(f"{controls}start/s1/").status_code == 403  # no Origin, no Referer
        for origin in ("http://evil.example", "http://127.0.0.1:1", "null"):
            assert http.post(f"{controls}start/s1/", headers={"Origin": origin}).status_code == 403
        referer = {"Referer": "http://evil.example/page"}
        assert http.post(f"{controls}start/s1/", headers=referer).status_code == 403
        assert fake.submissions == {}
        assert http.post(f"{controls}start/s1/", headers={"Origin": fake.origin}).status_code == 303
        assert http.post(f"{controls}start/s1/", headers={"Referer": controls}).status_code == 303
    assert len(fake.submissions) == 2

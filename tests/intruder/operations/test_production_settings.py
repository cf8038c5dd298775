"""Production settings, brute-force protection, CSP, and the embedded SQLite default.

Issue items 5 (SQLite under load, the worker), 7 (`check --deploy`, CSP, the public secret
key) and 8 (login and token throttling, the demo password).
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from intruder.auth import DEMO_PASSWORD
from intruder.models import Job
from intruder.services import jobs
from tests.intruder.factories import make_job, make_user

REPO = Path(__file__).resolve().parents[3]

PRODUCTION_ENV = {
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "study.example.org",
    "DJANGO_SECURE_SSL_REDIRECT": "1",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "DJANGO_SECURE_HSTS_PRELOAD": "1",
    "DJANGO_SECURE_COOKIES": "1",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://study.example.org",
}


def manage(*args: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    full_env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "INTRUDER_", "DATABASE_URL"))
    }
    full_env |= {"INTRUDER_VAR_DIR": str(tmp_path), "PYTHONPATH": str(REPO), **env}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # a child Django process
def test_check_deploy_is_clean_with_the_production_environment(tmp_path) -> None:
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV, tmp_path=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.slow  # a child Django process
def test_check_deploy_names_what_is_missing_without_it(tmp_path) -> None:
    result = manage("check", "--deploy", env={}, tmp_path=tmp_path)
    out = result.stdout + result.stderr
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in out
    assert "intruder.E001" in out and result.returncode != 0


@pytest.mark.slow  # a child Django process
def test_the_server_refuses_to_start_on_the_public_secret_key(tmp_path) -> None:
    code = "import intruder.wsgi"
    env = {"INTRUDER_VAR_DIR": str(tmp_path), "PYTHONPATH": str(REPO), "PATH": os.environ["PATH"]}
    refused = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0 and "public default" in refused.stderr
    started = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**env, "DJANGO_SECRET_KEY": secrets.token_urlsafe(50)},
        capture_output=True,
        text=True,
    )
    assert started.returncode == 0, started.stderr


def test_behind_a_tls_proxy_requests_are_secure_and_cookies_flagged(settings, client) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 3600
    settings.CSRF_COOKIE_SECURE = settings.SESSION_COOKIE_SECURE = True
    plain = client.get("/accounts/login/")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    proxied = client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
    assert proxied.status_code == 200
    assert proxied["Strict-Transport-Security"].startswith("max-age=3600")
    assert proxied.cookies["csrftoken"]["secure"]


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy_that_runs_only_the_sites_scripts(client) -> None:
    researcher = make_user()
    client.force_login(researcher)
    response = client.get(reverse("researcher-studies"))
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    body = response.content.decode()
    # The page's behaviour comes from this site (researcher.js); django-csp adds a nonce to
    # the policy only for a page that renders one, and any inline script must carry it.
    assert re.search(r'<script src="[^"]*intruder/researcher\.js"', body)
    inline = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", body)
    if inline:
        nonce = policy.split("'nonce-")[1].split("'")[0]
        assert all(f'nonce="{nonce}"' in tag for tag in inline), inline
    assert "https://app.prolific.com" in policy  # "Finish" redirects there from a form


TEMPLATES = REPO / "intruder" / "templates"


@pytest.mark.parametrize("template", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: p.name)
def test_every_inline_script_of_a_template_has_the_csp_nonce(template: Path) -> None:
    text = template.read_text()
    inline = text.count("<script>") + text.count("<script type=")
    assert inline == 0, f'{template.name}: use <script nonce="{{{{ request.csp_nonce }}}}">'


@pytest.mark.parametrize("template", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: p.name)
def test_no_template_has_an_inline_event_handler_the_csp_blocks(template: Path) -> None:
    """`onchange="..."` and friends never run under script-src without 'unsafe-inline'."""
    handlers = re.findall(r"\son[a-z]+\s*=", template.read_text())
    assert not handlers, f"{template.name}: move {handlers} to a static script"


@pytest.mark.django_db
def test_the_login_page_locks_a_username_after_repeated_failures(settings) -> None:
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 3
    make_user(username="alice", password="correct-horse-9")
    client = Client(REMOTE_ADDR="203.0.113.9")
    url = reverse("login")
    for _ in range(2):
        assert client.post(url, {"username": "alice", "password": "guess"}).status_code == 200
    assert client.post(url, {"username": "alice", "password": "guess"}).status_code == 429
    locked = client.post(url, {"username": "alice", "password": "correct-horse-9"})
    assert locked.status_code == 429 and "Too many login attempts" in locked.content.decode()
    # Another address is not locked out of the same account.
    other = Client(REMOTE_ADDR="198.51.100.3")
    ok = other.post(url, {"username": "alice", "password": "correct-horse-9"})
    assert ok.status_code == 302


@pytest.mark.django_db
def test_the_token_endpoint_is_rate_limited(settings) -> None:
    settings.INTRUDER_TOKEN_RATE = "3/minute"
    make_user(username="bob", password="correct-horse-9")
    api = APIClient(REMOTE_ADDR="203.0.113.10")
    codes = [
        api.post("/api/auth/token/", {"username": "bob", "password": f"guess{i}"}).status_code
        for i in range(5)
    ]
    assert codes == [400, 400, 400, 429, 429]


@pytest.mark.django_db
def test_the_demo_password_works_only_in_the_demo(settings) -> None:
    make_user(username="researcher", password=DEMO_PASSWORD)
    client = Client()
    form = {"username": "researcher", "password": DEMO_PASSWORD}
    settings.INTRUDER_DEMO = False
    assert client.post(reverse("login"), form).status_code == 200  # refused, form again
    token = APIClient().post("/api/auth/token/", form)
    assert token.status_code == 400
    settings.INTRUDER_DEMO = True
    assert client.post(reverse("login"), form).status_code == 302


@pytest.mark.slow  # a child Django process
def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path) -> None:
    code = (
        "import django; django.setup()\n"
        "from django.db import connection\n"
        "c = connection.cursor()\n"
        "print(c.execute('PRAGMA journal_mode').fetchone()[0],"
        " c.execute('PRAGMA busy_timeout').fetchone()[0])\n"
    )
    env = {
        "INTRUDER_VAR_DIR": str(tmp_path),
        "PYTHONPATH": str(REPO),
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "intruder.settings",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert out.stdout.split() == ["wal", "20000"], out.stderr


@pytest.mark.django_db
def test_the_worker_survives_database_errors_and_claims_again(monkeypatch) -> None:
    job = make_job(kind="noop_for_test")
    real_claim = jobs.job_claim_next
    calls = {"n": 0}

    def locked_twice(**kwargs):
        calls["n"] += 1
        if calls["n"] <= 2:
            raise OperationalError("database is locked")
        return real_claim(**kwargs)

    ran = []
    monkeypatch.setattr(jobs, "job_claim_next", locked_twice)
    monkeypatch.setattr(jobs, "job_run_claimed", lambda job, **kw: ran.append(job.pk) or job)
    lines: list[str] = []
    jobs.run_db_worker(once=True, poll_interval_s=0.01, log=lines.append)
    assert ran == [job.pk]
    assert sum("database error" in line for line in lines) == 2
    Job.objects.filter(pk=job.pk).delete()


@pytest.mark.django_db
def test_a_worker_draining_the_queue_gives_up_after_repeated_database_errors(monkeypatch) -> None:
    def always_locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(jobs, "job_claim_next", always_locked)
    with pytest.raises(OperationalError):
        jobs.run_db_worker(once=True, poll_interval_s=0.001, log=lambda line: None)


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/api/docs/", "/api/redoc/", "/admin/login/"])
def test_api_docs_and_admin_need_no_inline_script_and_no_cdn(client, url: str) -> None:
    client.force_login(make_user(is_staff=True, is_superuser=True))
    body = client.get(url).content.decode()
    assert "<script>" not in body.replace(" ", "")
    assert "cdn.jsdelivr.net" not in body


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    ["study=9223372036854775808", "study=-1", "study=99999999999999999999999", "study=1.5"],
)
@pytest.mark.parametrize(
    "endpoint", ["targets", "descriptions", "anonymized-texts", "participants", "judgments", "jobs"]
)
def test_id_filters_out_of_range_answer_400_not_500(endpoint: str, query: str) -> None:
    api = APIClient()
    api.force_authenticate(make_user())
    assert api.get(f"/api/{endpoint}/?{query}").status_code == 400


@pytest.mark.django_db
@pytest.mark.parametrize("pk", ["9223372036854775808", "9" * 40])
def test_path_ids_out_of_range_answer_404_not_500(client, pk: str) -> None:
    api = APIClient()
    api.force_authenticate(make_user())
    assert api.get(f"/api/studies/{pk}/").status_code == 404
    assert api.get(f"/api/jobs/{pk}/").status_code == 404
    assert api.get("/api/judgments/?study=9223372036854775807").status_code == 200


@pytest.mark.django_db
def test_a_post_behind_a_proxy_on_another_host_needs_one_of_the_documented_fixes(settings):
    # docs/operations.md, "Behind a proxy": the browser sends Origin https://..., but without a
    # trusted proxy header the request looks like plain HTTP and CSRF refuses it (403).
    settings.ALLOWED_HOSTS = ["study.example.org"]
    make_user(username="carol", password="correct-horse-9")

    def login(**headers: str) -> int:
        client = Client(enforce_csrf_checks=True, HTTP_HOST="study.example.org")
        client.get("/accounts/login/", **headers)
        token = client.cookies["csrftoken"].value
        form = {"username": "carol", "password": "correct-horse-9", "csrfmiddlewaretoken": token}
        return client.post(
            "/accounts/login/",
            form,
            HTTP_ORIGIN="https://study.example.org",
            HTTP_X_FORWARDED_PROTO="https",
            **headers,
        ).status_code

    assert login() == 403
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert login() == 302
    settings.SECURE_PROXY_SSL_HEADER = None
    settings.CSRF_TRUSTED_ORIGINS = ["https://study.example.org"]
    assert login() == 302
    settings.CSRF_TRUSTED_ORIGINS = []
    assert login(**{"wsgi.url_scheme": "https"}) == 302  # what a trusted gunicorn sets

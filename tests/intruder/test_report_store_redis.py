"""Where Django's cache is Redis, it is the report pages' shared store: the database keeps
only their labels, every process reads the same report, and a replaced one is dropped."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis

from intruder.analysis.page import ANALYSIS_PAGE
from intruder.models import Job
from intruder.reports import refresh as report_refresh
from intruder.reports.cache import cache_is_shared
from intruder.reports.models import ComputedReport
from intruder.services import jobs
from tests.intruder.report_pages import replace_compute
from tests.intruder.risk_fixtures import add_judgments, risk_study
from tests.intruder.test_report_refresh import add_one_judgment, no_compute
from tests.redis_server import redis_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_store(settings) -> Iterator[redis.Redis]:
    """Point Django's cache at the test Redis (under a prefix of this test's own, deleted
    after it); yield a plain client of that server, another process's view of it."""
    url = redis_url()
    prefix = f"intruder-test-{uuid.uuid4().hex[:8]}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": prefix,
        }
    }
    server = redis.Redis.from_url(url)
    yield server
    for key in server.scan_iter(f"{prefix}:*"):
        server.delete(key)


def stored_keys(server: redis.Redis, study) -> list[bytes]:
    return sorted(server.scan_iter(f"*intruder-page-report:study{study.pk}:*"))


@pytest.fixture
def judged_study():
    study = risk_study(per_person=2)
    add_judgments(study)
    return study


def test_the_default_store_is_the_database(judged_study):
    assert not cache_is_shared()
    report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    assert ComputedReport.objects.get(study=judged_study).content  # the pickled report


@pytest.mark.redis
def test_redis_holds_the_report_and_the_database_only_its_label(
    redis_store, judged_study, monkeypatch
):
    assert cache_is_shared()
    first = report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    row = ComputedReport.objects.get(study=judged_study, name=ANALYSIS_PAGE)
    assert bytes(row.content) == b""
    [key] = stored_keys(redis_store, judged_study)
    assert row.data_version.encode() in key and redis_store.ttl(key) == -1  # kept until replaced
    # Another web process reads it from Redis: nothing is computed in its request.
    replace_compute(monkeypatch, ANALYSIS_PAGE, no_compute)
    again = report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    assert again.current and again.value["summary"] == first.value["summary"]


@pytest.mark.redis
def test_the_refresh_job_replaces_the_report_in_redis(redis_store, judged_study, monkeypatch):
    report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    [old_key] = stored_keys(redis_store, judged_study)
    add_one_judgment(judged_study)
    replace_compute(monkeypatch, ANALYSIS_PAGE, no_compute)
    stale = report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    assert not stale.current and stale.count_new == 1  # the older report, read from Redis
    monkeypatch.undo()
    job = jobs.job_execute(stale.job.pk, heartbeat_interval_s=None)
    assert job.status == Job.Status.SUCCEEDED, job.error
    [new_key] = stored_keys(redis_store, judged_study)
    assert new_key != old_key  # the older version is dropped, not left behind
    row = ComputedReport.objects.get(study=judged_study, name=ANALYSIS_PAGE)
    assert row.data_version.encode() in new_key and bytes(row.content) == b""
    replace_compute(monkeypatch, ANALYSIS_PAGE, no_compute)
    fresh = report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    assert fresh.current and fresh.count_then == stale.count_now


@pytest.mark.redis
def test_a_report_redis_lost_is_computed_again_not_failed(redis_store, judged_study):
    first = report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    redis_store.delete(*stored_keys(redis_store, judged_study))  # evicted, or Redis restarted
    again = report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    assert again.current and again.value["summary"] == first.value["summary"]
    assert (
        report_refresh.report_current(judged_study, ANALYSIS_PAGE)["summary"]
        == first.value["summary"]
    )
    assert ComputedReport.objects.filter(study=judged_study).count() == 1

"""The real Redis server of the `redis` tests (scripts/test.sh starts a throwaway one and
sets INTRUDER_TEST_REDIS_URL): its URL, or a skip (a failure under INTRUDER_REQUIRE_REDIS=1)."""

from __future__ import annotations

import os

import pytest


def redis_url(*, need_rq: bool = False) -> str:
    """Return the test Redis server's URL once it answers a ping."""
    url = os.environ.get("INTRUDER_TEST_REDIS_URL", "")
    reason = ""
    if not url:
        reason = (
            "no Redis server: set INTRUDER_TEST_REDIS_URL (scripts/test.sh starts a "
            "throwaway redis-server and sets it)"
        )
    else:
        try:
            import redis

            if need_rq:
                import rq  # noqa: F401
        except ImportError:
            reason = "the rq extra is not installed: pip install -e '.[rq]'"
        else:
            try:
                redis.Redis.from_url(url, socket_connect_timeout=2).ping()
            except redis.RedisError as error:
                reason = f"Redis at {url} does not answer: {error}"
    if reason:
        if os.environ.get("INTRUDER_REQUIRE_REDIS") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return url

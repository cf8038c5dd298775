"""Where computed reports and plots are kept: Django's cache, shared by every process when
it is Redis.

With `DJANGO_CACHE_URL` (Redis) the cache is one that web and worker processes share: it
holds the stored page reports themselves (`intruder.reports.refresh` keeps only their
labels in `ComputedReport`). With the default per-process memory cache the database holds
them and the cache only spares a process reading them again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.core.cache.backends.redis import RedisCache

from intruder.models import Study
from intruder.reports.versions import REPORT_CACHE_VERSION, study_data_version

# Entries expire on their own too; a key for outdated data is simply never asked for again.
REPORT_CACHE_SECONDS = 6 * 3600

T = TypeVar("T")


def cache_is_shared() -> bool:
    """Return whether Django's cache is one every process shares (Redis), so that it, not
    the database, stores the page reports. Read per call: settings may change in tests."""
    return isinstance(caches[DEFAULT_CACHE_ALIAS], RedisCache)


def cached_for_inputs(name: str, inputs: Any, compute: Callable[[], T]) -> T:
    """Return `compute()`, cached under a digest of `inputs` (dataclasses and plain values
    whose repr shows every field): the key is the input itself, so it cannot go stale."""
    key_source = f"{name}|v{REPORT_CACHE_VERSION}|{inputs!r}"
    return _cached("intruder-computed:" + hashlib.sha256(key_source.encode()).hexdigest(), compute)


def _cached(key: str, compute: Callable[[], T]) -> T:
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, REPORT_CACHE_SECONDS)
    return value


def cached_for_study(study: Study, name: str, args: tuple[Any, ...], compute: Callable[[], T]) -> T:
    """Return `compute()` for this report of the study's current data, from the cache if made.

    `args` are the report's own arguments (a run id, a method) that the study's rows do not
    fix; they are part of the key.
    """
    key_source = f"{name}|{args!r}|{study.pk}|{study_data_version(study)}"
    return _cached("intruder-report:" + hashlib.sha256(key_source.encode()).hexdigest(), compute)

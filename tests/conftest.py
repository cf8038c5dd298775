"""Shared fixtures: the public research data (read by path, never copied), a tiny BERT, and
the settings every test runs under."""

import gc
import os
from pathlib import Path

import pytest

from research_data import missing_reason, shared_data_dir

# Child processes (RQ workers, CLI runs) leave reports to their first view too (see
# `suite_settings` below); a test that wants them prepared sets the variable itself.
os.environ.setdefault("INTRUDER_PREPARE_REPORTS", "0")
# The tests choose the precision path, never the host's CPU: by default they claim no native
# bf16 or int8 unit (the fp32 path, child processes included); a test of the bf16 or int8 path
# claims those units with `claim_cpu`, which runs everywhere (torch emulates a missing unit).
os.environ.setdefault("MODEL_RUNTIME_CPU", "none")
from tests.passes import LIBRARY_TEST_DIRS, SECOND_DATABASE_PASS
from tests.suite_settings import suite_settings
from tests.tiny_models import tiny_bert_saved

# The cyclic collector less often (issue 50): a test worker holds ~300,000 long-lived objects
# (Django, torch, pandas), and every full collection walks them all. On tests/intruder/risk
# and analysis in one process (392 tests), Python's default thresholds spent 9.7 s of 61.6 s in
# collections (29 full ones, 8.7 s); these spend 4.5 s (11 full ones), 57.9 s in all. Freezing
# the heap after collection (as served processes do, intruder/web/heap.py) added nothing here:
# the tests import most of what they hold after collection.
gc.set_threshold(50_000, 20, 100)

TESTS = Path(__file__).resolve().parent
# Fixtures through which a test reaches the database. pytest-django refuses database access to
# any test without one of them (or the django_db marker), so the set is exact, not a guess.
DATABASE_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "live_server",
        "admin_user",
        "admin_client",
        "django_user_model",
    }
)


def touches_database(item: pytest.Item) -> bool:
    """Whether the test can reach the database: through pytest-django, or in child processes
    that share it (the `redis` tests' workers)."""
    return (
        item.get_closest_marker("django_db") is not None
        or item.get_closest_marker("redis") is not None
        or not DATABASE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))
    )


def runs_long(item: pytest.Item) -> bool:
    """Whether the test is one of the long ones: a real browser, child processes, models."""
    return any(item.get_closest_marker(name) for name in ("slow", "browser", "redis"))


def shares_a_module_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a module-scoped fixture (a trained model, a built wheel)."""
    fixtures = getattr(item, "_fixtureinfo", None)
    if fixtures is None:
        return False
    return any(
        definition.scope == "module"
        for definitions in fixtures.name2fixturedefs.values()
        for definition in definitions
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """On the second database, leave the plain libraries' test folders uncollected."""
    if (
        SECOND_DATABASE_PASS
        and collection_path.parent == TESTS
        and collection_path.name in LIBRARY_TEST_DIRS
    ):
        return True
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep a module's tests on one xdist worker where they share a module fixture; on a
    second database (INTRUDER_TEST_DATABASE_ONLY=1), run only the tests that touch it.

    Under `--dist loadgroup` (scripts/test.sh) every other test goes to whichever worker is
    free, while an expensive module fixture is built once rather than once per worker (with
    pytest below 9.2: tests/test_xdist_groups.py).
    scripts/test.sh runs the suite on SQLite, then again on PostgreSQL; a test that never
    reaches the database would only repeat what the first pass proved.
    """
    grouping = config.pluginmanager.has_plugin("xdist")
    for item in items:
        if grouping and shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    if grouping:
        # Long tests first (a stable sort): xdist hands tests out in this order, and a worker
        # that draws a 40 s test last leaves the other idle while it runs.
        items.sort(key=lambda item: not runs_long(item))
    if not SECOND_DATABASE_PASS:
        return
    kept = [item for item in items if touches_database(item)]
    dropped = [item for item in items if not touches_database(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Return ../shared/data (or $SHARED_DATA_DIR), skipping where it is absent."""
    folder = shared_data_dir()
    if not folder.is_dir():
        pytest.skip(missing_reason(folder))
    return folder


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Save a 2-layer, 64-wide random BERT with the MiniLM WordPiece tokenizer."""
    return tiny_bert_saved(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(autouse=True)
def suite_settings_applied(settings, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Run each test under `suite_settings`, with an empty cache."""
    from django.core.cache import cache

    for name, value in suite_settings(tmp_path_factory).items():
        setattr(settings, name, value)
    cache.clear()


@pytest.fixture
def prepared_reports(settings) -> None:
    """Store reports before their first view, as the platform does by default."""
    settings.INTRUDER_PREPARE_REPORTS = True


@pytest.fixture(scope="session")
def tiny_chat_model(tmp_path_factory: pytest.TempPathFactory):
    """Load a random 1-layer GPT-2 saved by the test (no weights downloaded)."""
    from tests.llm_server import TinyChatModel, save_tiny_causal_lm

    return TinyChatModel(save_tiny_causal_lm(tmp_path_factory.mktemp("tiny_gpt2")))


@pytest.fixture(scope="session")
def llm_server_session(tiny_chat_model):
    """Serve the tiny model on loopback behind a key for the whole test session."""
    from tests.llm_server import start_server

    server = start_server(tiny_chat_model, api_key="test-key", stall_s=1.0)
    yield server
    server.shutdown()


@pytest.fixture
def llm_server(llm_server_session):
    """Return the session's chat server with no faults, scripts or logged requests left."""
    llm_server_session.reset()
    yield llm_server_session
    llm_server_session.reset()


@pytest.fixture
def llm_settings(llm_server, tmp_path):
    """Return settings for the test server: fast retries, a short timeout, a fresh cache."""
    from llm.settings import LLMSettings
    from tests.llm_server import MODEL_NAME

    return LLMSettings(
        base_url=llm_server.base_url,
        model=MODEL_NAME,
        api_key="test-key",
        timeout_s=10.0,
        max_retries=2,
        backoff_s=0.0,
        max_tokens=64,
        seed=1,
        concurrency=2,
        cache_dir=str(tmp_path / "llm-cache"),
    )


@pytest.fixture
def claim_cpu(monkeypatch):
    """Return a function that makes `model_runtime` see the named CPU units ("bf16,vnni")."""
    from model_runtime.hardware import CPU_OVERRIDE_VARIABLE

    def claim(features: str) -> None:
        monkeypatch.setenv(CPU_OVERRIDE_VARIABLE, features)

    return claim

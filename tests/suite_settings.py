"""The settings every test runs under, in one place: tests/conftest.py applies them to each
test, and a fixture that builds data for a whole module (tests/intruder/risk/test_report_forms.py)
applies them while it builds, before any test's own settings exist."""

from __future__ import annotations

from typing import Any

import pytest


def suite_settings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Return the settings every test runs under, each with why."""
    return {
        # The per-client limits off: every test client comes from 127.0.0.1. The tests of the
        # limits turn them on again; the cache that counts them starts empty (whoever applies
        # these clears it).
        "INTRUDER_ENROLMENT_RATE": None,
        "INTRUDER_TOKEN_RATE": None,
        "AXES_ENABLED": False,
        # Attack runs' cache and working files out of the checkout's var/ folder.
        "INTRUDER_ATTACK_DIR": tmp_path_factory.getbasetemp() / "attacks",
        # Reports left to their first view: storing each attack run's risk report (plots
        # included) at the end of its job cost the suite about a minute of CPU. The tests of
        # that step (tests/intruder/test_report_refresh.py, the demo's) turn it on again.
        "INTRUDER_PREPARE_REPORTS": False,
        # Test passwords hashed with MD5: PBKDF2's deliberate slowness dominates test time.
        "PASSWORD_HASHERS": ["django.contrib.auth.hashers.MD5PasswordHasher"],
    }

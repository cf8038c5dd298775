"""Swap a registered report's computation in a test (one that must not run, one that fails)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from intruder.reports.registry import PAGES


def replace_compute(
    monkeypatch: pytest.MonkeyPatch, name: str, compute: Callable[..., Any]
) -> None:
    """Make the registered report `name` compute with `compute` until the test ends."""
    monkeypatch.setitem(PAGES, name, dataclasses.replace(PAGES[name], compute=compute))

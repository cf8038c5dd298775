"""The rehearsal's risk report, and its headline numbers as each of its forms states them.

The report is written as a researcher would (`manage.py risk_report --attack` with TF-IDF, the
cheap attack); the human and the strongest machine rate of its headline are then read from
summary.json and looked for, in the report's own wording, in report.html. A form that states
another number, or none, is a violation (`invariants.py`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management import call_command

from intruder.analysis.intervals import Rate
from intruder.models import Study


def _rate_text(rate: dict[str, Any]) -> str:
    return Rate(**{key: rate[key] for key in ("k", "n", "pct", "ci_low", "ci_high")}).text()


def report_numbers(study: Study, out: Path) -> dict[str, dict[str, Any]]:
    """Write the risk report to `out`/risk; return {form: {quantity: value}}."""
    folder = out / "risk"
    call_command(
        "risk_report", study.slug, out=folder, attack=True, attacks="tfidf", stdout=_Quiet()
    )
    headline = json.loads((folder / "summary.json").read_text(encoding="utf-8"))["headline"]
    rates = {
        "human rate": headline["human"],
        "strongest machine rate": headline["machine"]["strongest"],
    }
    stated = {name: _rate_text(rate) for name, rate in rates.items() if rate.get("n")}
    html = (folder / "report.html").read_text(encoding="utf-8")
    return {
        "summary.json": stated,
        "report.html": {name: text if text in html else "absent" for name, text in stated.items()},
    }


class _Quiet:
    """A stdout that keeps the command's lines out of the rehearsal's own output."""

    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass

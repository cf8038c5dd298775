"""Answer evidence's rows that the study's reports read (a failed attention check flags the
participant's judgments), registered with the report store's data version when the app is
ready, so that the store imports none of this package."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from intruder.evidence.models import AttentionCheck
from intruder.models import Study
from intruder.reports.registry import register_study_rows
from intruder.reports.versions import table_rows


def attention_rows(study: Study) -> Iterable[tuple[Any, ...]]:
    """Return the study's attention checks as its data version digests them."""
    return table_rows(AttentionCheck.objects.filter(participant__study=study).order_by("pk"))


register_study_rows("attention", attention_rows)

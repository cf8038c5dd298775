"""Reads of answers' flags: which judgments and descriptions are flagged, which excluded.

`judgments_flag_status` is the one place that says whether a judgment counts in the
"without flagged" figures; the analysis page, the exports and the risk report read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from intruder.models import Description, FlaggedAnswer, Judgment, Study
from intruder.services.flags import answer_excluded, study_rules


@dataclass(frozen=True)
class FlagStatus:
    """One answer's flags and whether the study's rules (or a review) exclude it."""

    answer_id: int
    participant_id: int | None
    flag_codes: tuple[str, ...]
    review: str
    excluded: bool

    @property
    def flagged(self) -> bool:
        return bool(self.flag_codes)


def answer_flag_status(answer: FlaggedAnswer, rules: dict) -> FlagStatus:
    """Return one answer's flag status under the study's `rules` (`study_rules`)."""
    participant_id = getattr(answer, "participant_id", None) or getattr(answer, "writer_id", None)
    return FlagStatus(
        answer_id=answer.pk,
        participant_id=participant_id,
        flag_codes=tuple(flag.get("code", "") for flag in answer.flags or []),
        review=answer.flag_review,
        excluded=answer_excluded(answer, rules),
    )


def judgments_flag_status(study: Study) -> dict[int, FlagStatus]:
    """Return judgment id -> its flag status, for every judgment of the study."""
    rules = study_rules(study)
    judgments = (
        Judgment.objects.filter(participant__study=study)
        .only("pk", "participant_id", "flags", "flag_review")
        .order_by("pk")
    )
    return {j.pk: answer_flag_status(j, rules) for j in judgments}


def descriptions_flag_status(study: Study) -> dict[int, FlagStatus]:
    """Return description id -> its flag status (writers' descriptions of the study)."""
    rules = study_rules(study)
    descriptions = (
        Description.objects.filter(study=study)
        .only("pk", "writer_id", "flags", "flag_review")
        .order_by("pk")
    )
    return {d.pk: answer_flag_status(d, rules) for d in descriptions}


def flagged_judgments(study: Study) -> QuerySet[Judgment]:
    """Return the study's judgments with at least one flag (the review list), newest first."""
    return (
        Judgment.objects.filter(participant__study=study)
        .exclude(flags=[])
        .select_related("participant", "text", "flag_reviewed_by")
        .order_by("-created_at", "-pk")
    )


def flagged_descriptions(study: Study) -> QuerySet[Description]:
    """Return the study's writers' descriptions with at least one flag."""
    return (
        Description.objects.filter(study=study)
        .exclude(flags=[])
        .select_related("writer", "target", "flag_reviewed_by")
        .order_by("-created_at", "-pk")
    )


def participant_flag_counts(study: Study) -> dict[int, dict[str, int]]:
    """Return participant id -> {flag code: number of their answers with it}."""
    counts: dict[int, dict[str, int]] = {}
    for status in [
        *judgments_flag_status(study).values(),
        *descriptions_flag_status(study).values(),
    ]:
        if status.participant_id is None:
            continue
        mine = counts.setdefault(status.participant_id, {})
        for code in status.flag_codes:
            mine[code] = mine.get(code, 0) + 1
    return counts

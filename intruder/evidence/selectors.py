"""Reads of answers' flags: the flag codes, the study's exclusion rules, which judgments and
descriptions are flagged, which excluded (`intruder.evidence.flags` computes and reviews them).

`judgments_flag_status` is the one place that says whether a judgment counts in the
"without flagged" figures; the analysis page, the exports and the risk report read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from intruder.evidence.models import AttentionCheck
from intruder.models import Description, FlaggedAnswer, Judgment, Study


class Flag:
    """Flag codes, stored in answers' `flags` and named in exclusion rules."""

    PASTE = "paste"
    CANARY = "canary"
    TOO_FAST = "too_fast"
    AWAY = "away"
    FEW_KEYSTROKES = "few_keystrokes"
    NO_TELEMETRY = "no_telemetry"
    INCONSISTENT = "inconsistent_telemetry"
    INSERTED = "inserted"
    ATTENTION = "attention_failed"
    # Issue 48's plausibility flags (`intruder.evidence.plausibility`).
    TOO_FAST_TO_READ = "too_fast_to_read"
    IMPLAUSIBLE_TYPING = "implausible_typing"
    REPEATED_QUICK = "repeated_quick_answer"
    CATCH_IDENTIFIED = "catch_identified"  # `intruder.evidence.catch_trials`


FLAG_LABELS: dict[str, str] = {
    Flag.PASTE: "Pasted into the answer",
    Flag.CANARY: "Answer contains the hidden canary word",
    Flag.TOO_FAST: "Answered implausibly fast",
    Flag.AWAY: "Long time away from the page",
    Flag.FEW_KEYSTROKES: "An answer field mostly not typed",
    Flag.NO_TELEMETRY: "No (or malformed) telemetry",
    Flag.INCONSISTENT: "Telemetry that does not fit the server's record",
    Flag.INSERTED: "Answer text that arrived without typing or pasting (a script)",
    Flag.ATTENTION: "Failed an attention check",
    Flag.TOO_FAST_TO_READ: "Answered before the text could be read",
    Flag.IMPLAUSIBLE_TYPING: "Typing faster, or in larger pieces, than a person types",
    Flag.REPEATED_QUICK: "The same quick answer to several texts",
    Flag.CATCH_IDENTIFIED: "Named someone for made-up persons (catch trials)",
}

# Defaults of the rules; every threshold is the researcher's to change before launch.
DEFAULT_RULES: dict[str, Any] = {
    "exclude": [
        Flag.PASTE,
        Flag.CANARY,
        Flag.TOO_FAST,
        Flag.AWAY,
        Flag.FEW_KEYSTROKES,
        # No JavaScript, blocked scripts or not a browser: nothing shows how it was made.
        Flag.NO_TELEMETRY,
        Flag.INCONSISTENT,
        Flag.INSERTED,
        Flag.ATTENTION,
        Flag.TOO_FAST_TO_READ,
        Flag.IMPLAUSIBLE_TYPING,
        Flag.REPEATED_QUICK,
        Flag.CATCH_IDENTIFIED,
    ],
    # An intruder judgment made in less than this (the "fast" bots answer in < 3 s).
    "min_judgment_ms": 3000,
    # Seconds away from the page (tab hidden or window unfocused) on one text.
    "max_away_seconds": 8,
    # Characters typed (by trusted input events, phone keyboards included) below this share
    # of an answer field's characters.
    "min_keystroke_ratio": 0.5,
    # ... only for fields at least this long (a two-letter "no" is no evidence).
    "min_chars_for_keystrokes": 8,
    # Writers: characters per minute above this is faster than fast typists (~90 wpm).
    "max_writer_chars_per_minute": 450,
    # Intruders: a reading-time floor, the text's words at this many words a minute, from the
    # text's first serving to the answer (skimming is ~400-700; people read at 200-300).
    "max_reading_wpm": 600,
    # Key-by-key typing (at most 2 characters per input event) faster than this many ms per
    # character between the first input and the answer (~400 words a minute).
    "min_ms_per_typed_char": 30,
    # Characters one typing event may add outside an IME's composition (a phone's word
    # suggestion, an emoji; a fill() or execCommand adds the whole answer).
    "max_chars_per_input": 8,
    # The answer's typed characters per input event, on average (swiped words ~6, dictation
    # composes a few words per event).
    "max_chars_per_event": 16,
    # A participant's same answer to this many texts, each within quick_answer_seconds.
    "repeat_count": 3,
    "quick_answer_seconds": 15,
    # Catch trials a participant names someone for before all their answers are flagged.
    "catch_named_min": 2,
}
RULE_BOUNDS: dict[str, tuple[float, float]] = {
    "min_judgment_ms": (0, 600_000),
    "max_away_seconds": (1, 3600),
    "min_keystroke_ratio": (0.0, 1.0),
    "min_chars_for_keystrokes": (1, 10_000),
    "max_writer_chars_per_minute": (60, 10_000),
    "max_reading_wpm": (50, 100_000),
    "min_ms_per_typed_char": (0, 2_000),
    "max_chars_per_input": (1, 10_000),
    "max_chars_per_event": (1, 10_000),
    "repeat_count": (2, 1_000),
    "quick_answer_seconds": (0, 3_600),
    "catch_named_min": (1, 10),
}


def study_rules(study: Study) -> dict[str, Any]:
    """Return the study's exclusion rules, defaults filled in."""
    return {**DEFAULT_RULES, **(study.exclusion_rules or {})}


def answer_excluded(answer: FlaggedAnswer, rules: dict[str, Any]) -> bool:
    """Return whether an answer is left out of the "without flagged" figures.

    Confirmed: out. Overruled: in. Not reviewed: out when one of its flags is excluded by
    the study's rules.
    """
    if answer.flag_review == FlaggedAnswer.Review.CONFIRMED:
        return True
    if answer.flag_review == FlaggedAnswer.Review.OVERRULED:
        return False
    excluded = set(rules["exclude"])
    return any(flag.get("code") in excluded for flag in answer.flags or [])


@dataclass(frozen=True)
class FlagStatus:
    """One answer's flags and whether the study's rules (or a review) exclude it."""

    answer_id: int
    participant_id: int | None
    flag_codes: tuple[str, ...]
    review: str
    excluded: bool
    reasons: tuple[str, ...] = ()

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
        reasons=tuple(flag.get("reason", "") for flag in answer.flags or []),
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


# The key under which `ParticipantFlags.excluded_reasons` lists answers a review confirmed
# though they carry no flag.
CONFIRMED_WITHOUT_FLAG = "confirmed"


@dataclass(frozen=True)
class ParticipantFlags:
    """One participant's flags over all their answers and whether the rules exclude them.

    A participant is excluded when at least one of their answers is (`answer_excluded`:
    an unreviewed flag the rules exclude, or a confirmed review).
    """

    counts: dict[str, int]
    reasons: dict[str, tuple[str, ...]]
    n_answers: int
    n_flagged: int
    n_excluded: int
    # flag code (or CONFIRMED_WITHOUT_FLAG) -> reasons, of the
    # excluded answers only: what a rejection names.
    excluded_reasons: dict[str, tuple[str, ...]]

    @property
    def excluded(self) -> bool:
        return self.n_excluded > 0


def participant_flag_summary(study: Study) -> dict[int, ParticipantFlags]:
    """Return participant id -> their flags with reasons and excluded answers (judgments and
    descriptions), read from the same flag status as the figures and exports."""
    grouped: dict[int, list[FlagStatus]] = {}
    for status in [
        *judgments_flag_status(study).values(),
        *descriptions_flag_status(study).values(),
    ]:
        if status.participant_id is not None:
            grouped.setdefault(status.participant_id, []).append(status)
    summary = {}
    for pid, statuses in grouped.items():
        counts: dict[str, int] = {}
        reasons: dict[str, list[str]] = {}
        excluded: dict[str, list[str]] = {}
        for status in statuses:
            for code, reason in zip(status.flag_codes, status.reasons, strict=True):
                counts[code] = counts.get(code, 0) + 1
                reasons.setdefault(code, []).append(reason)
                if status.excluded:
                    excluded.setdefault(code, []).append(reason)
            if status.excluded and not status.flag_codes:
                excluded.setdefault(CONFIRMED_WITHOUT_FLAG, []).append("Confirmed by a reviewer.")
        summary[pid] = ParticipantFlags(
            counts=counts,
            reasons={code: tuple(r) for code, r in reasons.items()},
            n_answers=len(statuses),
            n_flagged=sum(s.flagged for s in statuses),
            n_excluded=sum(s.excluded for s in statuses),
            excluded_reasons={code: tuple(r) for code, r in excluded.items()},
        )
    return summary


def participant_flag_counts(study: Study) -> dict[int, dict[str, int]]:
    """Return participant id -> {flag code: number of their answers with it}."""
    return {pid: s.counts for pid, s in participant_flag_summary(study).items()}


def study_attention_checks(study: Study) -> QuerySet[AttentionCheck]:
    """Return the study's attention checks in a stable order: rows its reports read (a failed
    check flags the participant's judgments), digested into its data version."""
    return AttentionCheck.objects.filter(participant__study=study).order_by("pk")

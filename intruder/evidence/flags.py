"""Flags on participants' answers, the study's exclusion rules and the researcher's review.

A flag is {code, reason}: what was seen, in words a reviewer can check. Flags are computed
when an answer is stored, from the server's own evidence (`intruder.evidence.page_views`:
its clock, the page views and the gaps between them), the answer itself and the telemetry
checked against that evidence (`intruder.evidence.telemetry`), with the thresholds of the
study's exclusion rules. The rules say which flags exclude an answer; they are recorded with
a timestamp before launch (the first participant) and locked after it, like a
pre-registration. A researcher may then confirm a flag (the answer is excluded) or overrule
it (kept), with a reason that is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from intruder.evidence.canary import canary_in
from intruder.evidence.page_views import Evidence
from intruder.evidence.selectors import DEFAULT_RULES, FLAG_LABELS, RULE_BOUNDS, Flag
from intruder.evidence.telemetry import ANSWER_FIELDS, FIELDS_SIGNAL, RESTORED
from intruder.models import Description, FlaggedAnswer, Judgment, Participant, Study

# Fields whose restored text (`evidence.telemetry.RESTORED`) is taken on trust: the writer's
# description, whose page is bound to no server-side view (docs/participants.md).
RESTORABLE_FIELDS = frozenset({"text"})


def exclusion_rules_locked(study: Study) -> bool:
    """Return whether the study has launched (someone enrolled): its rules are then fixed."""
    return study.participants.exists()


def exclusion_rules_set(
    *, study: Study, exclude: list[str], thresholds: dict[str, float], now: datetime | None = None
) -> Study:
    """Record the study's exclusion rules with a timestamp; refused once the study launched."""
    if exclusion_rules_locked(study):
        raise ValidationError(
            "Participants have started: the exclusion rules recorded at "
            f"{study.exclusion_rules_set_at or 'launch (the defaults)'} can no longer change."
        )
    unknown = set(exclude) - set(FLAG_LABELS)
    if unknown:
        raise ValidationError(f"Unknown flags: {', '.join(sorted(unknown))}.")
    rules: dict[str, Any] = {"exclude": [code for code in FLAG_LABELS if code in exclude]}
    for name, (low, high) in RULE_BOUNDS.items():
        value = thresholds.get(name, DEFAULT_RULES[name])
        if not isinstance(value, (int, float)) or not low <= value <= high:
            raise ValidationError({name: f"Must be between {low} and {high}."})
        rules[name] = value
    study.exclusion_rules = rules
    study.exclusion_rules_set_at = now or timezone.now()
    study.save(update_fields=["exclusion_rules", "exclusion_rules_set_at", "updated_at"])
    return study


def _flag(code: str, reason: str) -> dict[str, str]:
    return {"code": code, "reason": reason}


def _field_flags(
    fields: dict[str, dict[str, int]], *, answers: dict[str, str], rules: dict[str, Any]
) -> list[dict[str, str]]:
    """Return the per-field flags: text that arrived without trusted input, and too little typed.

    Each field on its own (a name set by script beside a typed reason is caught): a change no
    trusted input event made, or characters neither typed nor pasted, are "inserted"; a
    longer field must also be mostly typed rather than pasted.
    """
    inserted, few = [], []
    for name, value in answers.items():
        # The browser counts a line break as one character; the post carries it as CRLF.
        chars = len(value.replace("\r\n", "\n").strip())
        if not chars:
            continue
        counts = fields.get(name) or {"typed": 0, "pasted": 0, "untrusted": 0}
        label = ANSWER_FIELDS[name]
        if counts["untrusted"]:
            inserted.append(f"“{label}” was changed {counts['untrusted']} time(s) by a script")
        # A writer's own earlier typing the page put back (a draft, a rejected post) counts
        # as typed; an intruder's earlier views are counted on the server instead.
        typed = counts["typed"] + (counts.get(RESTORED, 0) if name in RESTORABLE_FIELDS else 0)
        unexplained = chars - typed - counts["pasted"]
        if unexplained > 0:
            inserted.append(
                f"“{label}”: {unexplained} of {chars} characters neither typed nor pasted"
            )
        elif (
            chars >= rules["min_chars_for_keystrokes"]
            and typed < rules["min_keystroke_ratio"] * chars
        ):
            few.append(f"“{label}”: {typed} of {chars} characters typed")
    flags = []
    if inserted:
        flags.append(_flag(Flag.INSERTED, "; ".join(inserted) + "."))
    if few:
        flags.append(_flag(Flag.FEW_KEYSTROKES, "; ".join(few) + "."))
    return flags


def _telemetry_flags(
    telemetry: dict[str, Any] | None,
    *,
    answers: dict[str, str],
    problems: list[str],
    signals: list[str],
    rules: dict[str, Any],
    received: bool,
) -> list[dict[str, str]]:
    """Return the flags the browser's telemetry and its consistency give.

    `received`: a well-formed report came, though none counts (it named no served view).
    """
    if not signals:
        return []  # the study records nothing: there is nothing to miss
    if problems and (telemetry is not None or received):
        inconsistent = [_flag(Flag.INCONSISTENT, "; ".join(problems) + ".")]
    else:
        inconsistent = []
    if telemetry is None:
        return inconsistent or [_flag(Flag.NO_TELEMETRY, "The browser sent no valid telemetry.")]
    flags = inconsistent
    pastes = telemetry.get("paste_events", 0)
    if pastes:
        flags.append(
            _flag(
                Flag.PASTE,
                f"{pastes} paste(s), {telemetry.get('pasted_chars', 0)} characters pasted.",
            )
        )
    if FIELDS_SIGNAL in signals:
        flags += _field_flags(telemetry.get("fields") or {}, answers=answers, rules=rules)
    return flags


def judgment_flags(
    *,
    answers: dict[str, str],
    evidence: Evidence,
    signals: list[str],
    canary: str,
    rules: dict[str, Any],
) -> list[dict[str, str]]:
    """Return the flags of an intruder's judgment, from the server's evidence first.

    "Too fast" and "away" use the server's clock: the time from first serving to answer,
    and time no page view accounts for beside the time the browser reports away.
    """
    flags = []
    if canary_in(" ".join(answers.values()), canary):
        flags.append(_flag(Flag.CANARY, f"The answer contains the hidden word “{canary}”."))
    flags += _telemetry_flags(
        evidence.totals,
        answers=answers,
        problems=evidence.problems,
        signals=signals,
        rules=rules,
        received=evidence.answer_reported,
    )
    if evidence.server_ms < rules["min_judgment_ms"]:
        flags.append(
            _flag(
                Flag.TOO_FAST,
                f"Answered {evidence.server_ms / 1000:.1f} s after the text was first served "
                f"(rule: at least {rules['min_judgment_ms'] / 1000:.1f} s).",
            )
        )
    if evidence.away_ms > rules["max_away_seconds"] * 1000:
        flags.append(
            _flag(
                Flag.AWAY,
                f"{evidence.away_ms / 1000:.0f} s away from the page: "
                f"{evidence.absent_ms / 1000:.0f} s in {evidence.absences} absence(s) the "
                f"browser reported while no other view of the page was shown, "
                f"{evidence.unaccounted_ms / 1000:.0f} s no page view accounts for "
                f"({evidence.views} view(s); rule: at most {rules['max_away_seconds']} s).",
            )
        )
    return flags


def description_flags(
    *,
    text: str,
    telemetry: dict[str, Any] | None,
    problems: list[str],
    signals: list[str],
    rules: dict[str, Any],
) -> list[dict[str, str]]:
    """Return the flags of a writer's description: pasted, inserted, typed too fast or little.

    Time away is not flagged: writers are asked to look semi-famous people up.
    """
    flags = _telemetry_flags(
        telemetry,
        answers={"text": text},
        problems=problems,
        signals=signals,
        rules=rules,
        received=telemetry is not None,
    )
    typing_ms = (telemetry or {}).get("page_ms")
    if typing_ms:
        per_minute = len(text) / (typing_ms / 60_000)
        if per_minute > rules["max_writer_chars_per_minute"]:
            flags.append(
                _flag(
                    Flag.TOO_FAST,
                    f"{len(text)} characters in {typing_ms / 1000:.0f} s "
                    f"({per_minute:.0f} per minute; rule: at most "
                    f"{rules['max_writer_chars_per_minute']}).",
                )
            )
    return flags


@dataclass(frozen=True)
class FlagDecision:
    confirmed: bool
    reason: str


def judgments_flag_all(participant: Participant, flag: dict[str, str]) -> None:
    """Put `flag` on each of the participant's judgments that has none of its code: a flag
    about the person, not one answer (a failed attention check, catch trials named)."""
    for judgment in Judgment.objects.select_for_update().filter(participant=participant):
        if any(f.get("code") == flag["code"] for f in judgment.flags or []):
            continue
        judgment.flags = [*(judgment.flags or []), flag]
        judgment.save(update_fields=["flags"])


def flag_review_record(
    *, answer: Judgment | Description, user: Any, decision: FlagDecision
) -> FlaggedAnswer:
    """Record a researcher's confirmation or overruling of an answer's flags, with why."""
    reason = (decision.reason or "").strip()
    if not reason:
        raise ValidationError({"reason": "Please say why (the reason is kept)."})
    if len(reason) > 2000:
        raise ValidationError({"reason": "Please keep the reason under 2000 characters."})
    with transaction.atomic():
        answer.flag_review = (
            FlaggedAnswer.Review.CONFIRMED if decision.confirmed else FlaggedAnswer.Review.OVERRULED
        )
        answer.flag_review_reason = reason
        answer.flag_reviewed_by = user
        answer.flag_reviewed_at = timezone.now()
        answer.save(
            update_fields=[
                "flag_review",
                "flag_review_reason",
                "flag_reviewed_by",
                "flag_reviewed_at",
            ]
        )
    return answer

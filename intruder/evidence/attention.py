"""Attention checks: instructed-response items placed among an intruder's texts.

A study with `attention_checks` = n gives each intruder n short items, each between two of
their texts (never before the first one), that ask for a given word ("type the word
'orange'"). They are stored apart from judgments (`AttentionCheck`), so they never hold a
text's slot and never reach rates, assignment balance, the risk report or the text exports;
they are exported as their own table. The expected answer stays on the server.

A failed check puts the `attention_failed` flag (`evidence.flags`) on every judgment of the
participant, those made before and after it, so the study's exclusion rules and the
researcher's flag review decide, as for every other flag, whether they are counted.
"""

from __future__ import annotations

import random
import re
import unicodedata
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from intruder.evidence.flags import judgments_flag_all
from intruder.evidence.models import AttentionCheck
from intruder.evidence.selectors import Flag
from intruder.models import Participant, Study

# Built-in checks: (instruction, expected answer). Common words, one per check, so a
# participant who reads the item can answer it whatever their knowledge of the persons.
BUILT_IN_CHECKS: tuple[tuple[str, str], ...] = tuple(
    (
        "This is an attention check, not a text about a person. To show that you are "
        f"reading carefully, type the word \u201c{word}\u201d (without quotes) in the box below.",
        word,
    )
    for word in ("orange", "window", "river", "pencil", "garden", "silver", "bridge", "candle")
)

FAILED_REASON = (
    "Failed an attention check (asked for \u201c{expected}\u201d, answered \u201c{answer}\u201d)."
)
NO_ANSWER = "Please type your answer in the box."
MAX_ANSWER_CHARS = 200


def _normalized(text: str) -> str:
    """Fold case, accents and punctuation: "Orange." and "ORANGE" are the word asked for."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def attention_answer_passes(*, answer: str, expected: str) -> bool:
    """Return whether `answer` gives the expected word(s), alone or in a short sentence."""
    wanted = _normalized(expected)
    given = _normalized(answer)
    if not wanted or not given:
        return False
    return given == wanted or re.search(rf"\b{re.escape(wanted)}\b", given) is not None


def attention_check_places(*, count: int, texts: int, rng: random.Random) -> list[int]:
    """Return after how many judged texts each check is shown: distinct, never before the
    first text nor after the last (1 .. texts - 1), as many as there is room for."""
    room = list(range(1, texts))
    return sorted(rng.sample(room, min(count, len(room))))


def _checks_for(study: Study, count: int, rng: random.Random) -> list[tuple[str, str]]:
    prompt = (study.attention_check_prompt or "").strip()
    expected = (study.attention_check_answer or "").strip()
    if prompt and expected:
        return [(prompt, expected)] * count
    return rng.sample(BUILT_IN_CHECKS, min(count, len(BUILT_IN_CHECKS)))


def attention_checks_plan(
    *, participant: Participant, rng: random.Random | None = None
) -> list[AttentionCheck]:
    """Create the participant's checks once (idempotent, race-safe); return them in order."""
    existing = list(participant.attention_checks.order_by("after_texts"))
    study = participant.study
    if existing or not study.attention_checks or study.kind != Study.Kind.INTRUDER:
        return existing
    rng = rng or random.Random()
    places = attention_check_places(
        count=study.attention_checks, texts=study.items_per_participant, rng=rng
    )
    items = _checks_for(study, len(places), rng)
    try:
        with transaction.atomic():
            AttentionCheck.objects.bulk_create(
                AttentionCheck(participant=participant, after_texts=place, prompt=p, expected=e)
                for place, (p, e) in zip(places, items, strict=True)
            )
    except IntegrityError:
        pass  # a second tab planned them first
    return list(participant.attention_checks.order_by("after_texts"))


def attention_check_due(
    *, participant: Participant, completed: int, now: datetime | None = None
) -> AttentionCheck | None:
    """Return the unanswered check to show now that `completed` texts are judged, if any.

    Records when it was first shown (a reload shows the same check).
    """
    if not participant.study.attention_checks:
        return None
    plan = attention_checks_plan(participant=participant)
    due = next((c for c in plan if c.answered_at is None and c.after_texts <= completed), None)
    if due is not None and due.shown_at is None:
        due.shown_at = now or timezone.now()
        AttentionCheck.objects.filter(pk=due.pk, shown_at__isnull=True).update(
            shown_at=due.shown_at
        )
    return due


def attention_failed_flag(check: AttentionCheck) -> dict[str, str]:
    """Return the flag a failed check puts on the participant's judgments."""
    return {
        "code": Flag.ATTENTION,
        "reason": FAILED_REASON.format(expected=check.expected, answer=check.answer[:60]),
    }


def attention_flags_for(*, participant: Participant) -> list[dict[str, str]]:
    """Return the `attention_failed` flags a new judgment of the participant carries.

    A study without checks has none to look up (the settings are fixed at launch).
    """
    if not participant.study.attention_checks:
        return []
    failed = participant.attention_checks.filter(passed=False).order_by("after_texts").first()
    return [attention_failed_flag(failed)] if failed is not None else []


def attention_check_submit(
    *, participant: Participant, check_id: int, answer: str, now: datetime | None = None
) -> AttentionCheck | None:
    """Score the participant's answer to one of their checks; return it, None if unknown.

    Idempotent: an answered check keeps its first answer. An empty answer raises ValueError
    (the page asks again). A failed check flags all the participant's judgments.
    """
    answer = (answer or "").strip()[:MAX_ANSWER_CHARS]
    if not answer:
        raise ValueError(NO_ANSWER)
    now = now or timezone.now()
    with transaction.atomic():
        check = (
            AttentionCheck.objects.select_for_update()
            .filter(pk=check_id, participant=participant)
            .first()
        )
        if check is None or check.answered_at is not None:
            return check
        check.answer = answer
        check.passed = attention_answer_passes(answer=answer, expected=check.expected)
        check.answered_at = now
        check.save(update_fields=["answer", "passed", "answered_at"])
        if not check.passed:
            judgments_flag_all(participant, attention_failed_flag(check))
    return check

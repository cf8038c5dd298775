"""Issue 48's plausibility flags: what people can do beside what the evidence says.

Each side has its kinds: the bots the issue found (a plain HTTP client answering a 100-word
text 3.5-5.8 s after serving, "no idea" in 4-8 s on every text, a whole answer inserted in
one event, key-by-key typing no hand makes) and the honest ones that must stay clean (slow
readers, fast typists, phones swiping words, dictation). Clocks are injected."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from intruder.evidence.flags import exclusion_rules_set
from intruder.evidence.page_views import page_view_serve
from intruder.evidence.selectors import Flag
from intruder.models import Assignment, Judgment, PersonGroup, Study
from intruder.services.assignment import assignment_next
from intruder.services.judgments import judgment_submit
from tests.intruder.factories import (
    make_description,
    make_participant,
    make_study,
    make_target,
    make_text,
)

pytestmark = pytest.mark.django_db

FIELDS = ("guessed_name", "revealing_text", "other_knowledge")
T0 = timezone.now().replace(microsecond=0) - timedelta(hours=1)
# A served text of 100 words (the bots answered such a text).
WORDS_100 = " ".join(["PERSON_1 keeps the old lighthouse by the harbour and writes."] * 10)
assert len(WORDS_100.split()) == 100


@pytest.fixture
def study():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=4, judgments_per_text=4)
    for i in range(4):
        target = make_target(study=study, group=PersonGroup.FAMOUS, name=f"Oriel Vantassel{i}")
        make_text(study=study, description=make_description(study=study, target=target),
                  text=WORDS_100)  # fmt: skip
    return study


def report(view: str, *, page_s: float, field: str, typed: int, events: int, first_s: float | None,
           largest: int = 1) -> str:  # fmt: skip
    """What telemetry.js posts for one view (no absences)."""
    counts = {name: {"typed": 0, "pasted": 0, "untrusted": 0, "largest": 0} for name in FIELDS}
    counts[field] = {"typed": typed, "pasted": 0, "untrusted": 0, "largest": largest}
    page_ms = int(page_s * 1000)
    return json.dumps(
        {
            "v": 2,
            "view": view,
            "page_ms": page_ms,
            "first_input_ms": None if first_s is None else int(first_s * 1000),
            "typing_ms": 0,
            "keystrokes": events,
            "paste_events": 0,
            "pasted_chars": 0,
            "copy_events": 0,
            "copied_chars": 0,
            "focus_losses": 0,
            "away_ms": 0,
            "absences": [],
            "fields": counts,
        }
    )


class Session:
    """One participant answering texts one after another on an injected clock."""

    def __init__(self, study):
        self.participant = make_participant(study=study, consented_at=T0, instructions_seen_at=T0)
        self.clock = T0

    def answer(self, *, after_s: float, other: str = "", name: str = "", **typing) -> Judgment:
        assignment = assignment_next(participant=self.participant, now=self.clock)
        Assignment.objects.filter(pk=assignment.pk).update(shown_at=self.clock)
        view = page_view_serve(assignment=assignment, now=self.clock)
        self.clock += timedelta(seconds=after_s)
        field = "guessed_name" if name else "other_knowledge"
        typing = {"typed": len(name or other), "events": len(name or other), **typing}
        typing.setdefault("first_s", after_s / 2)
        judgment = judgment_submit(
            participant=self.participant,
            assignment_id=assignment.pk,
            self_identified=bool(name),
            guessed_name=name,
            revealing_text="the lighthouse" if name else "",
            other_knowledge=other,
            telemetry=report(view.token, page_s=after_s - 0.2, field=field, **typing),
            now=self.clock,
        ).judgment
        if name:  # the reason was typed too (the report above counted the name only)
            judgment.refresh_from_db()
        self.clock += timedelta(seconds=1)
        return judgment


def codes(judgment) -> set[str]:
    return {flag["code"] for flag in judgment.flags}


def reason(judgment, code: str) -> str:
    return next(flag["reason"] for flag in judgment.flags if flag["code"] == code)


HONEST = "No idea who, but they live by a harbour."


@pytest.mark.parametrize("after_s", [3.5, 4.2, 5.8])
def test_a_plain_client_answering_a_100_word_text_within_seconds_is_too_fast_to_read(
    study, after_s
):
    """The issue's 0 of 50: telemetry that fits the server's clock, 57 ms per typed
    character, answered 3.5-5.8 s after a 100-word text was served."""
    answer = "A lighthouse keeper."
    judgment = Session(study).answer(
        after_s=after_s, other=answer, first_s=after_s - len(answer) * 0.057
    )
    assert Flag.TOO_FAST_TO_READ in codes(judgment)
    assert "its 100 words take 10.0 s at 600 words a minute" in reason(
        judgment, Flag.TOO_FAST_TO_READ
    )


@pytest.mark.parametrize(
    ("kind", "after_s", "answer", "typing"),
    [
        # Slow reader: 100 words at 120 wpm, thinks, types slowly.
        ("slow reader", 95, HONEST, {"first_s": 70}),
        # Fast reader (400 wpm) and fast typist (120 wpm, ~100 ms a character).
        ("fast typist", 20, HONEST, {"first_s": 15.5}),
        # Phone, swipe typing: one composed word per input event.
        ("phone swipe", 40, HONEST, {"events": 9, "largest": 0, "first_s": 30}),
        # Phone, word suggestions tapped: a word and its space in one event.
        ("phone suggestions", 40, HONEST, {"events": 14, "largest": 8, "first_s": 28}),
        # Dictation: the recogniser composes two or three words per event.
        ("dictation", 35, HONEST, {"events": 4, "largest": 0, "first_s": 30}),
    ],
)
def test_honest_kinds_are_plausible(study, kind, after_s, answer, typing):
    judgment = Session(study).answer(after_s=after_s, other=answer, **typing)
    assert judgment.flags == [], (kind, judgment.flags)


def test_the_same_no_idea_within_seconds_on_every_text_is_a_pattern(study):
    """Careless: "no idea" in 4-8 s, every time (each text alone could be a quick reader
    of a short text; the reading floor is lowered here to show the pattern on its own)."""
    exclusion_rules_set(study=study, exclude=[Flag.REPEATED_QUICK],
                        thresholds={"max_reading_wpm": 100_000})  # fmt: skip
    session = Session(study)
    judgments = [
        session.answer(after_s=s, other=text, first_s=s - 1.5)
        for s, text in ((4, "no idea"), (7, "No idea."), (8, "no  idea!"))
    ]
    for judgment in judgments:
        judgment.refresh_from_db()
        assert codes(judgment) == {Flag.REPEATED_QUICK}
    assert "The same answer to 3 texts, each within 15 s" in reason(
        judgments[-1], Flag.REPEATED_QUICK
    )


def test_the_same_no_after_reading_every_text_is_no_pattern(study):
    """An honest participant who knows nobody says "no" to every text, after reading it."""
    session = Session(study)
    for after_s in (31, 45, 28, 52):
        judgment = session.answer(after_s=after_s, other="no", first_s=after_s - 2)
        assert judgment.flags == []


def test_quick_but_different_answers_are_no_pattern(study):
    exclusion_rules_set(study=study, exclude=[], thresholds={"max_reading_wpm": 100_000})
    session = Session(study)
    for after_s, text in ((9, "A sailor."), (11, "A writer from the north."), (12, "no idea")):
        judgment = session.answer(after_s=after_s, other=text, first_s=after_s - 3)
        assert Flag.REPEATED_QUICK not in codes(judgment)


@pytest.mark.parametrize("chars", [12, 26, 40])
def test_a_whole_answer_inserted_by_one_input_event_is_inserted(study, chars):
    """execCommand("insertText") or an automation's fill(): one trusted event, many
    characters (the page reports the largest)."""
    answer = ("A lighthouse keeper, fond of maps." * 2)[:chars].strip()
    judgment = Session(study).answer(
        after_s=30, other=answer, events=1, largest=len(answer), first_s=29
    )
    assert Flag.INSERTED in codes(judgment)
    assert f"{len(answer)} characters added by one input event" in reason(judgment, Flag.INSERTED)


def test_key_by_key_typing_faster_than_hands_is_implausible(study):
    """An automation typing with no delay after waiting: 40 characters, 40 events, 0.3 s."""
    answer = "A lighthouse keeper who loves old maps."
    judgment = Session(study).answer(after_s=30, other=answer, first_s=29.5)
    assert codes(judgment) == {Flag.IMPLAUSIBLE_TYPING}
    assert "key by key within 0.30 s" in reason(judgment, Flag.IMPLAUSIBLE_TYPING)


def test_a_report_claiming_many_characters_per_event_is_implausible(study):
    """Forged counts: the whole answer typed, two input events."""
    judgment = Session(study).answer(after_s=30, other=HONEST, events=2, largest=1, first_s=20)
    assert codes(judgment) == {Flag.IMPLAUSIBLE_TYPING}
    assert "per event; rule: at most 16" in reason(judgment, Flag.IMPLAUSIBLE_TYPING)


def test_the_thresholds_are_the_researchers(study):
    exclusion_rules_set(
        study=study,
        exclude=[],
        thresholds={
            "max_reading_wpm": 2_000,
            "max_chars_per_input": 50,
            "min_ms_per_typed_char": 0,
        },
    )
    answer = "A lighthouse keeper."
    judgment = Session(study).answer(after_s=4, other=answer, events=1, largest=20, first_s=3.9)
    assert Flag.TOO_FAST_TO_READ not in codes(judgment)
    assert Flag.INSERTED not in codes(judgment)

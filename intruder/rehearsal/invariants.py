"""What must hold after a rehearsal, each a count that must be 0, with who is involved.

Read from the rehearsal's own truth (what each player did and meant, `players.PlayerRecord`),
the sandbox Prolific's record (submissions and money actually paid) and the rehearsal's
database; never from the platform's own verdicts alone, or a fault would check itself.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from intruder.evidence.selectors import answer_excluded, study_rules
from intruder.models import Assignment, Judgment, Participant, Study
from intruder.rehearsal.crowd import BOTS, HONEST
from intruder.rehearsal.players import PlayerRecord

# Honest participants a study's rules may exclude before it counts as a violation: the
# answer-evidence benchmark's target (at most 2 % of each honest kind flagged).
HONEST_EXCLUDED_TOLERANCE = 0.02


@dataclass
class Violation:
    """One invariant: how often it failed, and the participants (or texts) involved."""

    name: str
    description: str
    count: int = 0
    involved: list[str] = field(default_factory=list)

    def add(self, who: str) -> None:
        self.count += 1
        if len(self.involved) < 50:
            self.involved.append(who)


def check_invariants(
    *,
    study: Study,
    records: list[PlayerRecord],
    paid: dict[str, list[dict[str, Any]]],
    listed_submissions: set[str],
    prolific_submissions: dict[str, str],
    report_numbers: dict[str, dict[str, Any]],
) -> list[Violation]:
    """Return every invariant with its count (0 where it held).

    `paid`: PID -> the bonus payments the sandbox made (each {"amount", "label"});
    `listed_submissions`: the PIDs the platform's submissions list shows;
    `prolific_submissions`: PID -> status of each of the study's submissions on the sandbox;
    `report_numbers`: form -> {quantity: value} as each of the report's forms states it.
    """
    by_pid = {r.pid: r for r in records}
    rules = study_rules(study)
    judgments = list(
        Judgment.objects.filter(participant__study=study).select_related(
            "participant", "text__description__target"
        )
    )
    kept_by_pid: dict[str, list[Judgment]] = defaultdict(list)
    all_by_pid: dict[str, list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        all_by_pid[judgment.participant.prolific_pid].append(judgment)
        if not answer_excluded(judgment, rules):
            kept_by_pid[judgment.participant.prolific_pid].append(judgment)
    truth = {
        (r.pid, a.assignment_id): a for r in records for a in r.answers
    }  # what each acknowledged answer truly was
    assignment_of = dict(
        Assignment.objects.filter(participant__study=study).values_list("pk", "text_id")
    )

    double = Violation("double_payments", "a participant paid the bonus more than once")
    for pid, payments in paid.items():
        if len(payments) > 1:
            double.add(f"{pid} ({len(payments)} payments)")

    ineligible = Violation(
        "payments_to_ineligible",
        "a bonus paid to someone not a submission of the study, not completed, or without a "
        "kept judgment that names the right person",
    )
    for pid in paid:
        record = by_pid.get(pid)
        reason = _bonus_ineligible(pid, record, kept_by_pid, truth, prolific_submissions)
        if reason:
            ineligible.add(f"{pid} ({record.kind if record else 'unknown'}: {reason})")

    bots = Violation("bots_kept", "a bot's or careless responder's judgment kept in the rates")
    honest = Violation(
        "honest_excluded",
        f"honest participants with an excluded judgment, beyond {HONEST_EXCLUDED_TOLERANCE:.0%}",
    )
    honest_seen = 0
    excluded_honest: list[str] = []
    for record in records:
        mine = all_by_pid.get(record.pid, [])
        if record.kind in BOTS:
            for judgment in mine:
                if not answer_excluded(judgment, rules):
                    bots.add(f"{record.pid} ({record.kind}, text {judgment.text_id})")
        elif record.kind in HONEST and mine:
            honest_seen += 1
            if any(answer_excluded(j, rules) for j in mine):
                codes = sorted({f["code"] for j in mine for f in (j.flags or [])})
                excluded_honest.append(f"{record.pid} ({record.kind}: {', '.join(codes)})")
    if len(excluded_honest) > math.floor(HONEST_EXCLUDED_TOLERANCE * honest_seen):
        for who in excluded_honest:
            honest.add(who)

    slots = Violation(
        "slots_orphaned_or_overfilled",
        "a text judged more often than the study allows, or held by someone who has left",
    )
    # Catch trials hold no slots: every intruder is shown some (`services.assignment`).
    per_text = Counter(j.text_id for j in judgments if not j.text.description.target.catch)
    for text_id, count in per_text.items():
        if count > study.judgments_per_text:
            slots.add(f"text {text_id} ({count} judgments)")
    left = Assignment.objects.filter(
        participant__study=study,
        status=Assignment.Status.ACTIVE,
        participant__status__in=[Participant.Status.RETURNED, Participant.Status.TIMED_OUT],
    )
    for assignment in left:
        slots.add(f"text {assignment.text_id} held by {assignment.participant_id}")

    lost = Violation("judgments_lost", "an answer the site acknowledged is not stored")
    stored = {(j.participant.prolific_pid, j.text_id) for j in judgments}
    for (pid, assignment_id), _ in truth.items():
        if (pid, assignment_of.get(assignment_id)) not in stored:
            lost.add(f"{pid} (assignment {assignment_id})")

    uneven = Violation(
        "uneven_judgment_counts",
        "texts of one person whose places taken differ by more than one",
    )
    # A place a participant left (returned, timed out) is free again and taken by the next
    # one; the rehearsal's crowd has no next one for the last few (Prolific would recruit
    # them), so a text's count is the places ever taken on it, judged or left. Within a
    # person: each intruder meets a person once, so a person with more texts gives each of
    # them fewer judgments by design.
    places = Counter()
    for text_id, _slot in set(
        Assignment.objects.filter(participant__study=study).values_list("text_id", "slot")
    ):
        places[text_id] += 1
    released = study.descriptions.filter(anonymizations__status="released").values_list(
        "anonymizations__pk", "target__key"
    )
    by_person: dict[str, list[int]] = defaultdict(list)
    for pk, person in released:
        by_person[person].append(pk)
    for person, pks in sorted(by_person.items()):
        counts = [places.get(pk, 0) for pk in pks]
        if max(counts) - min(counts) > 1:
            for pk in pks:
                if places.get(pk, 0) in (max(counts), min(counts)):
                    uneven.add(f"{person} text {pk} ({places.get(pk, 0)} places taken)")

    unlisted = Violation(
        "submissions_not_listed", "a submission Prolific reports that the platform does not list"
    )
    for pid in sorted(set(prolific_submissions) - listed_submissions):
        unlisted.add(f"{pid} ({prolific_submissions[pid]})")

    forms = Violation("report_forms_differ", "a number that differs between the report's forms")
    reference_form, *others = report_numbers or [None]
    for form in others:
        for quantity, value in report_numbers[reference_form].items():
            if report_numbers[form].get(quantity) != value:
                forms.add(
                    f"{quantity}: {reference_form} {value!r} vs {form} "
                    f"{report_numbers[form].get(quantity)!r}"
                )

    errors = Violation("server_errors", "a participant request answered 5xx or not at all")
    unplayed = Violation(
        "players_failed",
        "a simulated participant could not be played to its end (the rehearsal's own fault)",
    )
    for record in records:
        for error in record.errors:
            if "HTTP 5" in error or "transport" in error:
                errors.add(f"{record.pid}: {error}")
            elif error.startswith("rehearsal:"):
                unplayed.add(f"{record.pid}: {error}")

    return [
        double, ineligible, bots, honest, slots, lost, uneven, unlisted, forms, errors, unplayed,
    ]  # fmt: skip


def _bonus_ineligible(
    pid: str,
    record: PlayerRecord | None,
    kept_by_pid: dict[str, list[Judgment]],
    truth: dict[tuple[str, int], Any],
    prolific_submissions: dict[str, str],
) -> str:
    """Return why `pid` should not have been paid, or "" where the bonus was earned."""
    if pid not in prolific_submissions:
        return "not a submission of the study"
    if record is None or not record.completed:
        return "did not complete"
    kept = kept_by_pid.get(pid, [])
    if not kept:
        return "every judgment excluded" if record.answers else "no judgment"
    named_right = {
        a.assignment_id for (who, _), a in truth.items() if who == pid and a.guess.names_the_person
    }
    earned = [j for j in kept if j.identified and j.assignment_id in named_right]
    if not earned:
        return "no kept judgment names the right person"
    return ""

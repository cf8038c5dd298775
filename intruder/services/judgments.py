"""Intruders' judgments: validate, score against the target and store exactly once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from intruder.evidence.attention import attention_flags_for
from intruder.evidence.catch_trials import catch_flag, catch_named
from intruder.evidence.flags import judgment_flags, judgments_flag_all
from intruder.evidence.page_views import (
    JUDGE_FIELDS,
    assignment_evidence,
    page_views_store,
)
from intruder.evidence.plausibility import (
    answer_plausibility_flags,
    flags_merged,
    repeated_quick_flag,
    repeated_quick_judgments,
    text_words,
)
from intruder.evidence.selectors import study_rules
from intruder.evidence.telemetry import clock_slack_ms, telemetry_parse
from intruder.exceptions import IntruderError
from intruder.models import AnonymizedText, Assignment, Judgment, Participant
from intruder.selectors.persons import study_persons_with_ids
from model_runtime.guess_scoring import score_guess

# Shown when neither yes nor no was chosen (the participant form and the preview).
CHOICE_REQUIRED = "Please say whether you could identify the person."


class JudgmentRejected(IntruderError):
    """The judgment cannot be stored: unknown assignment, its slot went to someone else, or
    the researcher withdrew the text."""

    status_code = 409

    UNKNOWN = "unknown"
    EXPIRED = "expired"
    WITHDRAWN = "withdrawn"

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class JudgmentSubmission:
    """The stored judgment and whether this call created it (False: a repeated submit)."""

    judgment: Judgment
    created: bool


def judgment_time_spent_ms(
    *, shown_at: datetime, submitted_at: datetime, client_ms: int | None
) -> int:
    """Return the time spent on a text in ms.

    The server's figure (first shown -> submitted) is authoritative; the browser's is more
    precise, so it is used only when it agrees with the server's (a reload restarts the
    browser's count, and a forged figure would shorten the time).
    """
    server_ms = max(0, int((submitted_at - shown_at).total_seconds() * 1000))
    if client_ms is None or not 0 <= client_ms <= server_ms:
        return server_ms
    if server_ms - client_ms > clock_slack_ms(server_ms):
        return server_ms
    return client_ms


def judgment_validate(
    *, self_identified: bool, guessed_name: str, revealing_text: str, other_knowledge: str
) -> dict[str, str]:
    """Return the answers to store, keeping only the fields of the chosen branch.

    Yes: who it is and what revealed it are required. No: what they can tell is required.
    """
    guessed_name = (guessed_name or "").strip()
    revealing_text = (revealing_text or "").strip()
    other_knowledge = (other_knowledge or "").strip()
    errors = {}
    if self_identified:
        if not guessed_name:
            errors["guessed_name"] = "Please say who you think it is."
        if not revealing_text:
            errors["revealing_text"] = "Please say which part of the text revealed the identity."
        other_knowledge = ""
    else:
        if not other_knowledge:
            errors["other_knowledge"] = "Please say what you can tell about the person."
        guessed_name = revealing_text = ""
    if len(guessed_name) > 200:
        errors["guessed_name"] = "Please keep the name under 200 characters."
    if errors:
        raise ValidationError(errors)
    return {
        "guessed_name": guessed_name,
        "revealing_text": revealing_text,
        "other_knowledge": other_knowledge,
    }


def _late_answer_admissible(*, assignment: Assignment, participant: Participant) -> bool:
    """Return whether a released assignment may still take its answer (slot aside).

    Only an assignment released at the time limit: the text is still served and its
    participant has neither finished nor left (a withdrawn text is not judged late).
    """
    return assignment.text.status == AnonymizedText.Status.RELEASED and participant.status in (
        Participant.Status.STARTED,
        Participant.Status.TIMED_OUT,
    )


# What judging reads of an assignment and its text: never the original description, whose
# column would only cost the request its decoding; the served text for its length (the
# reading-time floor, `evidence.plausibility`).
JUDGED_ASSIGNMENT_FIELDS = (
    *(field.name for field in Assignment._meta.concrete_fields),
    "text__status",
    "text__text",
    "text__description__target__name",
    "text__description__target__aliases",
    "text__description__target__catch",
    "text__description__target__key",
)


def judgment_submit(
    *,
    participant: Participant,
    assignment_id: int,
    self_identified: bool,
    guessed_name: str = "",
    revealing_text: str = "",
    other_knowledge: str = "",
    client_time_ms: int | None = None,
    telemetry: str | None = None,
    now: datetime | None = None,
) -> JudgmentSubmission:
    """Store the participant's judgment of one assigned text, scored against its target.

    Idempotent: a second submit for the same assignment (double click, second tab, retried
    request) returns the first judgment unchanged.

    `telemetry` is the browser's raw post (`evidence.telemetry`), bound to the page view it
    names; with the views' earlier reports it is checked against the server's own evidence
    (`evidence.page_views`). Missing, malformed or forged, the judgment is stored all the
    same and flagged. Flags are computed here, with the study's rules (`evidence.flags`).

    A late answer (its assignment was released at the time limit) is kept while its slot is
    still free and the text still served, as Prolific does with a participant who is still
    active and not yet replaced; the participant's time-out is then undone. Once someone
    else holds the slot (the database's slot constraint decides) it is refused.
    """
    now = now or timezone.now()
    assignment = (
        Assignment.objects.select_related("text__description__target")
        .only(*JUDGED_ASSIGNMENT_FIELDS)
        .filter(pk=assignment_id, participant=participant)
        .first()
    )
    if assignment is None:
        raise JudgmentRejected(JudgmentRejected.UNKNOWN)
    if assignment.status == Assignment.Status.COMPLETED:
        # A repeated submit (an assignment is completed and judged in one transaction). The
        # first submit, the common case, skips this lookup.
        existing = Judgment.objects.filter(assignment=assignment).first()
        if existing is None:
            raise JudgmentRejected(JudgmentRejected.EXPIRED)
        return JudgmentSubmission(judgment=existing, created=False)
    late = assignment.status == Assignment.Status.RELEASED
    if late and not _late_answer_admissible(assignment=assignment, participant=participant):
        raise JudgmentRejected(JudgmentRejected.EXPIRED)
    if assignment.text.status != AnonymizedText.Status.RELEASED:
        # Withdrawn by the researcher while the participant held it: no judgment is stored.
        raise JudgmentRejected(JudgmentRejected.WITHDRAWN)
    answers = judgment_validate(
        self_identified=self_identified,
        guessed_name=guessed_name,
        revealing_text=revealing_text,
        other_knowledge=other_knowledge,
    )
    target = assignment.text.description.target
    study = participant.study
    # The other persons matter only for a guess (one query; none for "could not identify").
    persons, person_ids = study_persons_with_ids(study) if answers["guessed_name"] else ([], {})
    score = score_guess(
        target.name,
        answers["guessed_name"],
        aliases=target.aliases or (),
        threshold=study.identification_threshold,
        others=persons,
        true_key=target.key,
        rule=study.identification_rule,
    )
    shown_at = assignment.shown_at or assignment.assigned_at
    time_spent_ms = judgment_time_spent_ms(
        shown_at=shown_at, submitted_at=now, client_ms=client_time_ms
    )
    signals = study.telemetry_signals or []
    report = telemetry_parse(telemetry, signals=signals, answer_fields=JUDGE_FIELDS)
    evidence = assignment_evidence(assignment=assignment, report=report, now=now)
    rules = study_rules(study)
    judged = {name: answers[name] for name in JUDGE_FIELDS}
    flags = judgment_flags(
        answers=judged,
        evidence=evidence,
        signals=signals,
        canary=assignment.canary,
        rules=rules,
    ) + attention_flags_for(participant=participant)
    flags += answer_plausibility_flags(
        answers=judged, evidence=evidence, words=text_words(assignment.text.text), rules=rules
    )
    repeated = repeated_quick_judgments(
        participant=participant, answers=judged, server_ms=evidence.server_ms, rules=rules
    )
    named = catch_named(
        target=target, self_identified=self_identified, guessed_name=answers["guessed_name"]
    )
    caught = catch_flag(
        participant=participant,
        named_now=answers["guessed_name"].strip() if named else "",
        rules=rules,
    )
    flags = flags_merged(flags + ([caught] if caught else []))
    if repeated:
        flags.append(repeated_quick_flag(len(repeated) + 1, rules))
    stored_telemetry = None
    if evidence.totals is not None:
        stored_telemetry = {
            **evidence.totals,
            "page_views": evidence.views,
            "reported_views": evidence.reported_views,
        }
    try:
        with transaction.atomic():
            # Claim the assignment: only one request moves it from active (or, late, from
            # released) to completed, and only while its text is still released. A late
            # claim of a slot someone else holds now breaks the slot constraint and lands in
            # the except below.
            claimed = Assignment.objects.filter(
                pk=assignment.pk,
                status=assignment.status,
                text__status=AnonymizedText.Status.RELEASED,
            ).update(status=Assignment.Status.COMPLETED, completed_at=now)
            if not claimed:
                raise IntegrityError("assignment is no longer active")
            if late:
                Participant.objects.filter(
                    pk=participant.pk, status=Participant.Status.TIMED_OUT
                ).update(status=Participant.Status.STARTED)
            judgment = Judgment(
                assignment=assignment,
                participant=participant,
                text=assignment.text,
                self_identified=self_identified,
                time_spent_ms=time_spent_ms,
                telemetry=stored_telemetry,
                flags=flags,
                cosine=score.cosine,
                identified=score.identified,
                matched_alias=score.matched_alias,
                token_set_ratio=score.token_set_ratio,
                surname_match=score.surname_match,
                surname_agrees=score.surname_agrees,
                other_cosine=score.other_cosine,
                other_person_id=person_ids.get(score.other_key),
                named_other=score.named_other,
                **answers,
            )
            judgment.save()
            if caught is not None:  # the person named made-up persons: all their answers
                judgments_flag_all(participant, caught)
            for earlier in repeated:  # the pattern flags every answer in it
                if all(flag["code"] != flags[-1]["code"] for flag in earlier.flags):
                    earlier.flags = [*earlier.flags, flags[-1]]
                    earlier.save(update_fields=["flags"])
            page_views_store(assignment=assignment, report=report, now=now)
            seen = {"catch_named": F("catch_named") + 1} if named else {}
            Participant.objects.filter(pk=participant.pk).update(last_seen_at=now, **seen)
    except IntegrityError:
        existing = Judgment.objects.filter(assignment=assignment).first()
        if existing is not None:
            return JudgmentSubmission(judgment=existing, created=False)
        raise JudgmentRejected(JudgmentRejected.EXPIRED) from None
    return JudgmentSubmission(judgment=judgment, created=True)

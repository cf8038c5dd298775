"""Bulk approval and rejection following the study's exclusion rules, with a preview.

Who is clean and who is excluded comes from the one flag status of the study
(`intruder.evidence.selectors.participant_flag_summary`: the study's rules and the researcher's
reviews), the same the "without flagged" figures and the exports read. Each participant is
then sent one call of their own (`review_one`), so every outcome is recorded per participant;
Prolific's bulk-approve answers one sentence for all and would leave the records guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

from intruder.evidence.selectors import (
    CONFIRMED_WITHOUT_FLAG,
    FLAG_LABELS,
    Flag,
    ParticipantFlags,
    participant_flag_summary,
)
from intruder.models import Participant, Study
from intruder.prolific.client import ProlificClient
from intruder.prolific.models import ProlificAction, ProlificSubmission
from intruder.prolific.services import (
    ProlificActionRefused,
    SubmissionFacts,
    review_refusal,
    reviews_send,
)
from intruder.selectors.monitoring import participant_rows

APPROVE_CLEAN = "approve-clean"
REJECT_EXCLUDED = "reject-excluded"
BULK_RULES: dict[str, str] = {
    APPROVE_CLEAN: "Approve every participant who completed here, awaits review on Prolific "
    "and has no answer the exclusion rules exclude",
    REJECT_EXCLUDED: "Reject every participant awaiting review on Prolific with at least one "
    "answer the exclusion rules (or a confirmed review) exclude",
}
AWAITING = "AWAITING REVIEW"
# The Prolific rejection category a flag suggests, most telling first.
FLAG_CATEGORIES: tuple[tuple[str, str], ...] = (
    (Flag.ATTENTION, "FAILED_CHECK"),
    (Flag.CATCH_IDENTIFIED, "FAILED_CHECK"),
    (Flag.TOO_FAST, "TOO_QUICKLY"),
    (Flag.TOO_FAST_TO_READ, "TOO_QUICKLY"),
    (Flag.CANARY, "FAILED_INSTRUCTIONS"),
    (Flag.PASTE, "LOW_EFFORT"),
    (Flag.FEW_KEYSTROKES, "LOW_EFFORT"),
    (Flag.INSERTED, "LOW_EFFORT"),
    (Flag.AWAY, "LOW_EFFORT"),
    (Flag.IMPLAUSIBLE_TYPING, "LOW_EFFORT"),
    (Flag.REPEATED_QUICK, "LOW_EFFORT"),
)


@dataclass(frozen=True, kw_only=True)
class BulkCandidate(SubmissionFacts):
    """A participant a bulk rule would act on, with what the preview shows."""

    reason: str = ""
    category: str = ""


def _label(code: str) -> str:
    if code == CONFIRMED_WITHOUT_FLAG:
        return "Judged unusable by the researcher's review"
    return FLAG_LABELS.get(code, code)


def rejection_reason(study: Study, flags: ParticipantFlags) -> str:
    """Return the prefilled rejection message: the rule, and the participant's own flags.

    Flags are named by their labels with counts, not their detailed reasons (those name
    telemetry and the hidden canary word), and the rule's other flags are not listed: a
    rejection should not teach what else is checked.
    """
    when = (
        f"recorded on {study.exclusion_rules_set_at:%Y-%m-%d}, before the study started"
        if study.exclusion_rules_set_at
        else "set before the study started"
    )
    seen = "; ".join(
        f"{_label(code)} ({len(reasons)} answer{'s' if len(reasons) != 1 else ''})"
        for code, reasons in flags.excluded_reasons.items()
    )
    return (
        f"Your submission to “{study.participant_title}” is rejected under the study's "
        f"exclusion rules ({when}), which leave out answers that show the signs below. "
        f"{flags.n_excluded} of your {flags.n_answers} answers were excluded: {seen}."
    )


def rejection_category(flags: ParticipantFlags) -> str:
    """Return the Prolific category the participant's excluding flags suggest."""
    for code, category in FLAG_CATEGORIES:
        if code in flags.excluded_reasons:
            return category
    return "OTHER"


def _selects(rule: str, platform_status: str, flags: ParticipantFlags | None) -> bool:
    excluded = flags is not None and flags.excluded
    if rule == APPROVE_CLEAN:
        return not excluded and platform_status == Participant.Status.COMPLETED
    return excluded


def _awaiting_candidates(study: Study) -> list[BulkCandidate]:
    """Return everyone awaiting review on Prolific and not yet reviewed from here."""
    subs = {s.prolific_pid: s for s in ProlificSubmission.objects.filter(study=study)}
    reviewed = set(
        ProlificAction.objects.filter(
            study=study,
            kind__in=[ProlificAction.Kind.APPROVE, ProlificAction.Kind.REJECT],
            status=ProlificAction.Status.SUCCEEDED,
        ).values_list("prolific_pid", flat=True)
    )
    summary = participant_flag_summary(study)
    found = []
    for row in participant_rows(study):
        sub = subs.get(row.prolific_pid)
        if sub is None or sub.status != AWAITING or row.prolific_pid in reviewed:
            continue
        flags = summary.get(row.pk)
        excluded = flags is not None and flags.excluded
        found.append(
            BulkCandidate(
                **SubmissionFacts.fields(row, sub),
                flags=flags,
                reason=rejection_reason(study, flags) if excluded else "",
                category=rejection_category(flags) if excluded else "",
            )
        )
    return sorted(found, key=lambda c: c.prolific_pid)


def bulk_candidates(study: Study, rule: str) -> list[BulkCandidate]:
    """Return who `rule` would act on now (the preview, and the check at sending)."""
    if rule not in BULK_RULES:
        raise ProlificActionRefused(f"Unknown bulk rule {rule!r}.")
    return [c for c in _awaiting_candidates(study) if _selects(rule, c.platform_status, c.flags)]


@dataclass(frozen=True)
class BulkOutcome:
    actions: list[ProlificAction]
    skipped: list[str]  # asked for, but the rule no longer selects them

    @property
    def succeeded(self) -> int:
        return sum(a.status == ProlificAction.Status.SUCCEEDED for a in self.actions)


def bulk_review(
    *,
    study: Study,
    client: ProlificClient,
    rule: str,
    pids: list[str],
    user=None,
    reasons: dict[str, str] | None = None,
    categories: dict[str, str] | None = None,
) -> BulkOutcome:
    """Send the reviews `rule` selects, for the previewed `pids` only.

    The rule is evaluated again now: a participant previewed but no longer selected (flagged
    since, reviewed meanwhile) is skipped and named. Rejections use each participant's
    (edited) reason and category, all checked before anything is sent.
    """
    kind = ProlificAction.Kind.APPROVE if rule == APPROVE_CLEAN else ProlificAction.Kind.REJECT
    chosen = set(pids)
    current = [c for c in bulk_candidates(study, rule) if c.prolific_pid in chosen]
    reasons, categories = reasons or {}, categories or {}
    plan = []
    for candidate in current:
        reason = reasons.get(candidate.prolific_pid, candidate.reason).strip()
        category = categories.get(candidate.prolific_pid, candidate.category or "OTHER")
        refusal = review_refusal(kind, reason, category)
        if refusal:
            raise ProlificActionRefused(f"{candidate.prolific_pid}: {refusal}")
        plan.append((candidate.prolific_pid, reason, category))
    actions = reviews_send(study=study, client=client, kind=kind, plan=plan, user=user)
    selected = {c.prolific_pid for c in current}
    return BulkOutcome(actions=actions, skipped=sorted(chosen - selected))


def review_counts(study: Study) -> dict[str, int] | None:
    """Return how many each bulk rule selects now; None while nobody awaits review."""
    if not ProlificSubmission.objects.filter(study=study, status=AWAITING).exists():
        return None
    awaiting = _awaiting_candidates(study)
    return {
        rule.replace("-", "_"): sum(_selects(rule, c.platform_status, c.flags) for c in awaiting)
        for rule in BULK_RULES
    }

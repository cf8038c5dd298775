"""Who a motivated-intruder bonus pays, for which judgments, and who it leaves out and why.

By default a participant is paid per identified judgment only when they are a submission of
this Prolific study (testers who entered with another STUDY_ID are not), completed here, and
the judgment is one the study's exclusion rules keep and no earlier bonus, under any label,
paid for. Identified is read from `Judgment.identified` alone, so whatever the scoring
decides (issue 46's best match among the study's persons included) is what is paid for.
Anyone else is paid only when the researcher ticks them and says why; the preview lists
everyone with an identified judgment, each judgment with its text, guess, score, exclusion
status and any earlier bonus.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Q

from intruder.evidence.selectors import FLAG_LABELS, judgments_flag_status
from intruder.models import Judgment, Participant, Study
from intruder.prolific.models import ProlificAction, ProlificSubmission
from intruder.prolific.services import bonus_label_key

# Including someone outside the default rule needs a reason this long, recorded with the bonus.
MIN_INCLUDE_REASON_CHARS = 10
EXCERPT_CHARS = 80


@dataclass(frozen=True)
class BonusJudgment:
    """One identified judgment, as the bonus preview shows it."""

    judgment_id: int
    text_id: int
    text_excerpt: str
    guess: str
    score: float | None
    excluded: bool
    exclusion: str  # the excluding flags, in words ("" when kept)
    earlier: str  # the other label(s) that already paid (or set up) a bonus for it
    this_label: bool  # already in a bonus under this label (a retry sends nothing new)


@dataclass(frozen=True)
class BonusCandidate:
    """A participant with at least one identified judgment, and what the bonus does for them."""

    prolific_pid: str
    participant_status: str
    submission_status: str  # "" when Prolific has no submission of theirs in this study
    judgments: tuple[BonusJudgment, ...]
    included: bool = False  # ticked by the researcher, outside the default rule

    @property
    def is_submission(self) -> bool:
        return bool(self.submission_status)

    @property
    def completed(self) -> bool:
        return self.participant_status == Participant.Status.COMPLETED

    @property
    def default_judgments(self) -> tuple[BonusJudgment, ...]:
        """The judgments the default rule pays for: kept by the rules, not paid before."""
        if not (self.is_submission and self.completed):
            return ()
        return tuple(j for j in self.judgments if not j.excluded and not j.earlier)

    @property
    def eligible(self) -> bool:
        return bool(self.default_judgments)

    @property
    def paid_judgments(self) -> tuple[BonusJudgment, ...]:
        """What this bonus pays for: the default rule's, or (ticked) any not paid before."""
        if self.eligible:
            return self.default_judgments
        if self.included:
            return tuple(j for j in self.judgments if not j.earlier)
        return ()

    @property
    def why_not(self) -> str:
        """Why the default rule leaves them out ("" when it pays them)."""
        if self.eligible:
            return ""
        if not self.is_submission:
            return "not a submission of this Prolific study"
        if not self.completed:
            return "did not complete here"
        if all(j.earlier for j in self.judgments):
            return "already paid under another label"
        return "every identified answer is excluded by the study's rules (or paid before)"


def _earlier_bonuses(study: Study, label: str) -> tuple[dict[int, list[str]], set[int]]:
    """Return judgment id -> other labels that paid (or set up) it; and this label's ids.

    A bonus recorded before judgments were (issue 47) covers every judgment its participant
    had then. A failed bonus never set up on Prolific covers nothing.
    """
    key = bonus_label_key(label)
    other: dict[int, list[str]] = defaultdict(list)
    same: set[int] = set()
    actions = ProlificAction.objects.filter(study=study, kind=ProlificAction.Kind.BONUS).exclude(
        Q(status=ProlificAction.Status.FAILED) & Q(prolific_ref="")
    )
    for action in actions:
        ids = list(action.judgment_ids or [])
        if not ids:
            ids = list(
                Judgment.objects.filter(
                    participant__study=study,
                    participant__prolific_pid=action.prolific_pid,
                    created_at__lte=action.created_at,
                ).values_list("pk", flat=True)
            )
        if bonus_label_key(action.reason) == key:
            same.update(ids)
        else:
            for judgment_id in ids:
                other[judgment_id].append(action.reason)
    return other, same


def _exclusion_words(codes: tuple[str, ...], review: str) -> str:
    words = [FLAG_LABELS.get(code, code) for code in codes]
    if review == "confirmed":
        words.append("judged unusable by the researcher's review")
    return "; ".join(words) or "excluded"


def bonus_candidates(
    study: Study, *, label: str, include: frozenset[str] = frozenset()
) -> list[BonusCandidate]:
    """Return everyone with an identified judgment, each with what the bonus does for them.

    `include` names participants the researcher ticked to pay outside the default rule.
    """
    judgments = (
        Judgment.objects.filter(participant__study=study, identified=True)
        .select_related("participant", "text")
        .order_by("participant__prolific_pid", "pk")
    )
    subs = dict(
        ProlificSubmission.objects.filter(study=study).values_list("prolific_pid", "status")
    )
    flags = judgments_flag_status(study)
    earlier, same = _earlier_bonuses(study, label)
    by_participant: dict[int, list[BonusJudgment]] = defaultdict(list)
    participants: dict[int, Participant] = {}
    for judgment in judgments:
        status = flags.get(judgment.pk)
        excluded = bool(status and status.excluded)
        participants[judgment.participant_id] = judgment.participant
        by_participant[judgment.participant_id].append(
            BonusJudgment(
                judgment_id=judgment.pk,
                text_id=judgment.text_id,
                text_excerpt=" ".join(judgment.text.text.split())[:EXCERPT_CHARS],
                guess=judgment.guessed_name,
                score=judgment.cosine,
                excluded=excluded,
                exclusion=_exclusion_words(status.flag_codes, status.review) if excluded else "",
                earlier=", ".join(sorted(set(earlier.get(judgment.pk, ())))),
                this_label=judgment.pk in same,
            )
        )
    return [
        BonusCandidate(
            prolific_pid=participant.prolific_pid,
            participant_status=participant.status,
            submission_status=subs.get(participant.prolific_pid, ""),
            judgments=tuple(by_participant[pk]),
            included=participant.prolific_pid in include,
        )
        for pk, participant in sorted(participants.items(), key=lambda p: p[1].prolific_pid)
    ]


@dataclass(frozen=True)
class BonusSelection:
    """What a bonus pays: per participant, the amount, the judgments, and any override."""

    amounts: dict[str, Decimal]
    judgments: dict[str, list[int]]
    overrides: dict[str, str]
    candidates: list[BonusCandidate]


def bonus_select(
    *,
    study: Study,
    per_identified: Decimal,
    label: str,
    include: list[str] | None = None,
    include_reason: str = "",
) -> BonusSelection:
    """Return who the bonus pays and for what; refuse an inclusion without a reason.

    Raises ValueError for a participant ticked who has no identified judgment, or ticked
    without a reason of MIN_INCLUDE_REASON_CHARS characters.
    """
    chosen = frozenset(include or ())
    reason = " ".join(include_reason.split())
    candidates = bonus_candidates(study, label=label, include=chosen)
    known = {c.prolific_pid for c in candidates}
    if chosen - known:
        raise ValueError(f"No identified judgment to pay: {', '.join(sorted(chosen - known))}.")
    outside = sorted(c.prolific_pid for c in candidates if c.included and not c.eligible)
    if outside and len(reason) < MIN_INCLUDE_REASON_CHARS:
        raise ValueError(
            f"Paying {', '.join(outside)} goes beyond the default rule: say why (at least "
            f"{MIN_INCLUDE_REASON_CHARS} characters); it is recorded with the bonus."
        )
    amounts, judgments, overrides = {}, {}, {}
    for candidate in candidates:
        paid = candidate.paid_judgments
        if not paid:
            continue
        amounts[candidate.prolific_pid] = per_identified * len(paid)
        judgments[candidate.prolific_pid] = [j.judgment_id for j in paid]
        if not candidate.eligible:
            overrides[candidate.prolific_pid] = f"Included outside the rule: {reason}"
    return BonusSelection(
        amounts=amounts, judgments=judgments, overrides=overrides, candidates=candidates
    )

"""Reads for the pre-release risk check: which texts the machine re-identifies, and why."""

from __future__ import annotations

from dataclasses import dataclass, field

from intruder.models import AttackResult, AttackRun, Study


@dataclass
class RiskFlag:
    """The machine ranks a text's true person first: by which attacks, on which words."""

    text_id: int
    attacks: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    probability: float | None = None
    checked_at: object = None
    edited_since: bool = False


def latest_risk_check(study: Study | int) -> AttackRun | None:
    """Return the study's newest risk check (finished or not)."""
    study_id = study if isinstance(study, int) else study.pk
    return (
        AttackRun.objects.filter(study_id=study_id, purpose=AttackRun.Purpose.RISK_CHECK)
        .select_related("job")
        .first()
    )


def risk_flags(run: AttackRun | None) -> dict[int, RiskFlag]:
    """Return anonymized text id -> flag, for texts some attack of `run` re-identified."""
    if run is None:
        return {}
    flags: dict[int, RiskFlag] = {}
    hits = (
        AttackResult.objects.filter(run=run, true_rank=1, anonymized_text__isnull=False)
        .select_related("anonymized_text")
        .order_by("attack")
    )
    for result in hits:
        flag = flags.setdefault(
            result.anonymized_text_id,
            RiskFlag(text_id=result.anonymized_text_id, checked_at=result.created_at),
        )
        flag.attacks.append(result.attack)
        flag.words += [w for w in result.driving_words if w not in flag.words]
        flag.probability = max(flag.probability or 0.0, result.true_prob or 0.0)
        flag.edited_since = result.anonymized_text.updated_at > result.created_at
    return flags

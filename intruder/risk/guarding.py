"""Mask a study's texts until the machine attackers rank the person k-th or worse: the
`guard` library as a study job (a rank promise against the attacks consulted, not k-anonymity).

The attack's background is one of the risk report's two: (b) the study's own descriptions,
cross-validated (`attacks.background`: each text is guarded against attacks fitted on the
other folds, so a text never meets itself or its writer's other text about the same person),
or (a) documents uploaded per target person. The guard's spans
(category REIDENTIFYING) are stored on the model anonymization like a researcher's edit
(revision-checked), so the review page shows them and they can be undone. Released texts are
left alone: what intruders already see does not change under them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from guard import DEFAULT_ATTACKS, GuardConfig
from intruder.models import AnonymizedText, Job, Study
from intruder.services.anonymization import MODEL_METHOD, span_to_dict
from intruder.services.jobs import job_start
from intruder.services.review import StaleRevisionError, anonymized_text_set_spans

# Texts guarded per batch: each batch's spans are stored and its rows published before the
# next starts, so the review page fills in while the job runs and a crash loses one batch.
GUARD_BATCH = 8
BACKGROUNDS = ("cross_validated", "uploaded")


@dataclass
class _Unit:
    """Texts guarded against one background: a cross-validation fold, or the uploaded one."""

    label: str
    text_ids: list[str]
    background: dict[str, list[str]]


def _units(
    descriptions: list[Any],
    background: str,
    documents: dict[str, str] | None,
    folds: int,
    seed: int,
) -> list[_Unit]:
    """Return the backgrounds to guard against, as the risk report's attack runs build them."""
    if background == "uploaded":
        return [
            _Unit(
                "uploaded background",
                [str(d.id) for d in descriptions],
                {key: [text] for key, text in (documents or {}).items()},
            )
        ]
    from attacks.background import BackgroundRecord
    from attacks.crossval import fold_backgrounds

    records = [
        BackgroundRecord(str(d.id), d.target.key, str(d.writer_id) if d.writer_id else None, d.text)
        for d in descriptions
    ]
    return [
        _Unit(f"fold {fold.index + 1}", fold.test_ids, fold.texts_by_person)
        for fold in fold_backgrounds(records, k=min(folds, max(len(records), 2)), seed=seed)
    ]


def guard_study_texts(
    *,
    study: Study,
    progress: Callable[..., None],
    k: int = GuardConfig.k,
    attacks: Sequence[str] = DEFAULT_ATTACKS,
    budget: float = GuardConfig.budget,
    background: str = "cross_validated",
    background_documents: dict[str, str] | None = None,
    folds: int = 5,
    seed: int = 0,
    publish: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Guard every unreleased model anonymization of `study`; return per-text ranks and words.

    `background`: "cross_validated" (the study's own other descriptions, k-fold) or "uploaded"
    (`background_documents`, target key -> text), the risk report's two options. `publish`
    receives the summary so far after every batch of texts (the job stores it, the review page
    polls it). A retry simply runs again: texts guarded before start from their stored spans,
    already rank >= k, and are left unchanged.
    """
    from anonymize import Span
    from anonymize.labels import GUARD_CATEGORY
    from guard import GuardItem, fit_attacks, guard_texts
    from guard.residual import residual_words

    if background not in BACKGROUNDS:
        raise ValueError(f"background must be one of {BACKGROUNDS}, got {background!r}")
    if background == "uploaded" and len(background_documents or {}) < 2:
        raise ValueError("an uploaded background needs documents for at least two persons")
    config = GuardConfig(k=k, budget=budget)
    descriptions = list(study.descriptions.select_related("target").order_by("id"))
    texts = {
        str(t.description_id): t
        for t in AnonymizedText.objects.filter(
            description__study=study, method=MODEL_METHOD
        ).select_related("description__target")
    }
    total = len(texts)
    summary: dict[str, Any] = {
        "k": k,
        "attacks": list(attacks),
        "budget": budget,
        "background": background,
        "guarded": 0,
        "changed": 0,
        "flagged": 0,
        "skipped": {},
        "texts": [],
    }

    def skip(reason: str) -> None:
        summary["skipped"][reason] = summary["skipped"].get(reason, 0) + 1

    done = 0
    progress(done, total, "building the background")
    for unit in _units(descriptions, background, background_documents, folds, seed):
        chosen = []
        for description_id in unit.text_ids:
            text = texts.get(description_id)
            if text is None:
                continue
            if text.status == AnonymizedText.Status.RELEASED:
                skip("released")
                done += 1
            elif text.description.target.key not in unit.background:
                skip("no background for the person")
                done += 1
            else:
                chosen.append(text)
        progress(done, total, f"{unit.label}: fitting {', '.join(attacks)}")
        if not chosen:
            continue
        if len(unit.background) < 2:
            for _ in chosen:
                skip("fewer than two persons in the background")
            done += len(chosen)
            continue
        fitted = fit_attacks(unit.background, list(attacks))
        for first in range(0, len(chosen), GUARD_BATCH):
            batch = chosen[first : first + GUARD_BATCH]
            items = [
                GuardItem(
                    str(t.pk),
                    t.description.text,
                    t.description.target.key,
                    [Span.from_dict(s, t.description.text) for s in t.spans],
                )
                for t in batch
            ]
            results = guard_texts(items, fitted, config)
            residual = residual_words(results, fitted)
            for text, result, words in zip(batch, results, residual, strict=True):
                done += 1
                added = [s.text for s in result.spans if s.category == GUARD_CATEGORY]
                changed = len(result.spans) != len(text.spans)
                if changed:
                    try:
                        anonymized_text_set_spans(
                            text=text,
                            spans=[span_to_dict(s) for s in result.spans],
                            expected_revision=text.revision,
                            user=None,
                        )
                    except StaleRevisionError:
                        skip("edited by a researcher meanwhile")
                        continue
                summary["guarded"] += 1
                summary["changed"] += changed
                summary["flagged"] += result.flagged
                summary["texts"].append(
                    {
                        "text_id": text.pk,
                        "description_id": text.description_id,
                        "target": result.target,
                        "rank_before": result.ranks_before,
                        "rank_after": result.ranks_after,
                        "masked_words": result.masked_words,
                        "guard_spans": added,
                        # What the attacks still lean on: the researcher may mask more.
                        "residual_words": words,
                        "flagged": result.flagged,
                        "reason": result.reason,
                    }
                )
            if publish is not None:
                publish(summary)
            progress(done, total, f"{unit.label}: guarded")
    return summary


def guard_job_start(*, study: Study, user: Any, params: dict[str, Any]) -> tuple[Job, bool]:
    """Queue the guard on the study unless it is queued or running; (job, created).

    `params` are those of `guard_study_texts` (k, attacks, budget, background, ...).
    """
    return job_start(kind=Job.Kind.GUARD_STUDY, study=study, params=params, created_by=user)

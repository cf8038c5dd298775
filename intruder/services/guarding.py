"""Make a study's texts k-anonymous against the machine: the `guard` library as a study job.

The attack's background is background (b), the study's own descriptions, cross-validated
(`attacks.background`): each text is guarded against attacks fitted on the other folds, so a
text never meets itself or its writer's other text about the same person. The guard's spans
(category REIDENTIFYING) are stored on the model anonymization like a researcher's edit
(revision-checked), so the review page shows them and they can be undone. Released texts are
left alone: what intruders already see does not change under them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from intruder.models import AnonymizedText, Study
from intruder.services.anonymization import MODEL_METHOD, span_to_dict
from intruder.services.review import StaleRevisionError, anonymized_text_set_spans


def _span_objects(spans: Sequence[dict[str, Any]], original: str) -> list[Any]:
    from anonymize import Span

    return [
        Span(
            int(s["start"]),
            int(s["end"]),
            original[int(s["start"]) : int(s["end"])],
            str(s["category"]),
            "",
            1.0 if s.get("score") is None else float(s["score"]),
        )
        for s in spans
    ]


def guard_study_texts(
    *,
    study: Study,
    progress: Callable[..., None],
    k: int = 5,
    attacks: Sequence[str] = ("tfidf", "bm25"),
    budget: float = 0.3,
    folds: int = 5,
    seed: int = 0,
) -> dict[str, Any]:
    """Guard every unreleased model anonymization of `study`; return per-text ranks and words.

    A retry simply runs again: texts guarded before start from their stored spans, already
    rank >= k, and are left unchanged.
    """
    from anonymize.labels import GUARD_CATEGORY
    from attacks.background import BackgroundRecord, cross_validation_folds
    from guard import GuardConfig, GuardItem, fit_attacks, guard_texts

    config = GuardConfig(k=k, budget=budget)
    descriptions = list(study.descriptions.select_related("target").order_by("id"))
    texts = {
        str(t.description_id): t
        for t in AnonymizedText.objects.filter(
            description__study=study, method=MODEL_METHOD
        ).select_related("description__target")
    }
    records = [
        BackgroundRecord(str(d.id), d.target.key, str(d.writer_id) if d.writer_id else None, d.text)
        for d in descriptions
    ]
    total = len(texts)
    summary: dict[str, Any] = {
        "k": k,
        "attacks": list(attacks),
        "budget": budget,
        "guarded": 0,
        "changed": 0,
        "flagged": 0,
        "skipped": {},
        "texts": [],
    }

    def skip(reason: str) -> None:
        summary["skipped"][reason] = summary["skipped"].get(reason, 0) + 1

    done = 0
    progress(done, total, "building cross-validated backgrounds")
    for fold in cross_validation_folds(records, k=min(folds, max(len(records), 2)), seed=seed):
        chosen = []
        for description_id in fold.test_ids:
            text = texts.get(description_id)
            if text is None:
                continue
            if text.status == AnonymizedText.Status.RELEASED:
                skip("released")
                done += 1
            elif text.description.target.key not in fold.background:
                skip("no background for the person")
                done += 1
            else:
                chosen.append(text)
        progress(done, total, f"fold {fold.index + 1}: fitting {', '.join(attacks)}")
        if not chosen:
            continue
        if len(fold.background) < 2:
            for _ in chosen:
                skip("fewer than two persons in the background")
            done += len(chosen)
            continue
        fitted = fit_attacks(fold.background, list(attacks))
        items = [
            GuardItem(
                str(t.pk),
                t.description.text,
                t.description.target.key,
                _span_objects(t.spans, t.description.text),
            )
            for t in chosen
        ]
        results = guard_texts(items, fitted, config)
        for text, result in zip(chosen, results, strict=True):
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
                    done += 1
                    progress(done, total, "guarded")
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
                    "flagged": result.flagged,
                    "reason": result.reason,
                }
            )
            done += 1
            progress(done, total, "guarded")
    return summary

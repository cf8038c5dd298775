"""Mask a study's texts until the machine attackers rank the person k-th or worse: the
`guard` library as a study job (a rank promise against the attacks consulted, not k-anonymity).

Each run is a `GuardRun` row with its job; the job stores a `GuardResult` row per text as it
guards it (a batch at a time, with the text's new spans, in one transaction), so the review
page fills in while it runs and a retried job skips the texts the run has a row for.

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
from typing import Any

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from guard import DEFAULT_ATTACKS, GuardConfig, ordinal
from intruder.bounds import FOLDS, GUARD_BUDGET, RANK, SEED
from intruder.exceptions import IntruderError
from intruder.models import AnonymizedText, Job, Study
from intruder.risk.background_uploads import BackgroundUploadError, uploaded_background_check
from intruder.risk.models import AttackRun, GuardResult, GuardRun
from intruder.services import jobs
from intruder.services.anonymization import MODEL_METHOD, span_to_dict
from intruder.services.review import StaleRevisionError, anonymized_text_set_spans

# Texts guarded per batch: each batch's spans and result rows are stored before the next
# starts, so the review page fills in while the job runs and a crash loses one batch.
GUARD_BATCH = 8
BACKGROUNDS = tuple(AttackRun.Background.values)


class GuardRunError(IntruderError):
    """Settings a guard run cannot use; the message says which and why."""

    api_field = "non_field_errors"


def _units(
    descriptions: list[Any],
    background: str,
    documents: dict[str, str] | None,
    folds: int,
    seed: int,
) -> list[Any]:
    """Return the backgrounds to guard against, as the risk report's attack runs build them
    (`attacks.crossval.run_backgrounds`: the uploaded one, or the k folds)."""
    from attacks.background import BackgroundRecord
    from attacks.crossval import run_backgrounds

    records = [
        BackgroundRecord(str(d.id), d.target.key, str(d.writer_id) if d.writer_id else None, d.text)
        for d in descriptions
    ]
    uploaded = (
        {key: [text] for key, text in (documents or {}).items()}
        if background == "uploaded"
        else None
    )
    return run_backgrounds(
        records, uploaded=uploaded, folds=min(folds, max(len(records), 2)), seed=seed
    )


def _label(unit: Any) -> str:
    return "uploaded background" if unit.index is None else f"fold {unit.index + 1}"


def guard_run_start(
    *,
    study: Study,
    user: Any,
    rank: int = GuardConfig.k,
    budget: float = GuardConfig.budget,
    background: str = AttackRun.Background.CROSS_VALIDATED,
    background_documents: dict[str, str] | None = None,
    folds: int = FOLDS.default,
    seed: int = SEED.default,
    attacks: Sequence[str] = DEFAULT_ATTACKS,
) -> tuple[GuardRun, bool]:
    """Store a guard run and queue its job, unless one is queued or running; (run, created).

    `background`: "cross_validated" (the study's own other descriptions, k-fold) or
    "uploaded" (`background_documents`, target key -> text), the risk report's two options.
    A run already at work is handed back instead (one at a time per study).
    """
    _validate(
        study=study,
        rank=rank,
        budget=budget,
        background=background,
        documents=background_documents,
        folds=folds,
        seed=seed,
        attacks=attacks,
    )
    _validate_reachable(
        rank=int(rank), candidates=guard_candidates(study, background, background_documents)
    )
    active = _active_run(study)
    if active is not None:
        return active, False
    try:
        return (
            _guard_run_create(
                study=study,
                user=user,
                rank=int(rank),
                budget=float(budget),
                background=background,
                background_documents=background_documents or {},
                folds=int(folds),
                seed=int(seed),
                attacks=list(attacks),
            ),
            True,
        )
    except jobs.JobAlreadyActive as busy:  # a double click lost the race
        active = _active_run(study)
        if active is None:
            raise GuardRunError(str(busy)) from None
        return active, False


def _validate(
    *,
    study: Study,
    rank: int,
    budget: float,
    background: str,
    documents: dict[str, str] | None,
    folds: int,
    seed: int,
    attacks: Sequence[str],
) -> None:
    if background not in BACKGROUNDS:
        raise GuardRunError(f"background must be one of {BACKGROUNDS}, got {background!r}")
    if background == AttackRun.Background.UPLOADED:
        try:
            uploaded_background_check(study, documents or {}, persons=2, strangers=True)
        except BackgroundUploadError as error:
            raise GuardRunError(str(error)) from None
    for bound, value in ((RANK, rank), (GUARD_BUDGET, budget), (FOLDS, folds), (SEED, seed)):
        if not bound.holds(value):
            raise GuardRunError(bound.message)
    if not attacks:
        raise GuardRunError("choose at least one attack")
    try:
        GuardConfig(k=int(rank), budget=float(budget))
    except ValueError as error:
        raise GuardRunError(str(error)) from None


def guard_candidates(study: Study, background: str, documents: dict[str, str] | None = None) -> int:
    """Return how many persons the attacks rank: no text can rank its person worse.

    Cross-validated: the study's persons with a description (a fold may hold fewer, and
    its texts are then skipped, `execute_guard_run`); uploaded: the documents' persons.
    """
    if background == AttackRun.Background.UPLOADED:
        return len(documents or {})
    return study.descriptions.values("target").distinct().count()


def reachable_rank(candidates: int) -> int:
    """Return the rank a guard run offers by default: the guard's own, or the candidates'
    count where the study has fewer persons (a larger rank masks until the budget runs out)."""
    return max(2, min(GuardConfig.k, candidates))


def _validate_reachable(*, rank: int, candidates: int) -> None:
    """Refuse a rank no text can reach, as the CLI does (`guard.cli`): the guard would mask
    until the budget is spent and the ranks could not move."""
    if candidates < 2:
        raise GuardRunError(
            f"the background holds {candidates} person(s): the guard needs at least two"
        )
    if rank > candidates:
        raise GuardRunError(
            f"rank {rank} is more than the {candidates} candidate persons: no text can rank its "
            f"person {ordinal(rank)} or worse; use rank {candidates} or less, or a larger "
            "background"
        )


def _active_run(study: Study) -> GuardRun | None:
    """Return the study's guard run whose job is queued or running, if any."""
    return (
        GuardRun.objects.filter(study=study, job__status__in=jobs.ACTIVE_STATUSES)
        .select_related("job")
        .first()
    )


@transaction.atomic
def _guard_run_create(*, study: Study, user: Any, **fields: Any) -> GuardRun:
    """Store the run and queue its job in one transaction (both or neither)."""
    run = GuardRun(study=study, created_by=user, **fields)
    run.full_clean()
    run.save()
    # The settings are the run's; the job names its run (and the settings, for the jobs list).
    params = {
        "run": run.pk,
        "rank": run.rank,
        "budget": run.budget,
        "background": run.background,
        "folds": run.folds,
    }
    run.job = jobs.job_enqueue(
        kind=Job.Kind.GUARD_STUDY, study=study, params=params, created_by=user
    )
    run.save(update_fields=["job"])
    return run


def execute_guard_run(*, run: GuardRun, progress: Callable[..., None]) -> dict[str, Any]:
    """Guard every unreleased model anonymization of the run's study; store a row per text.

    Each batch's spans (stored on the text like a researcher's edit, revision-checked) and
    result rows are written in one transaction. A retry skips the texts the run has a row
    for, so none is guarded twice or counted twice. Return the run's counts (the job's
    result).
    """
    from anonymize import Span
    from guard import GuardItem, fit_attacks, guard_texts
    from guard.residual import residual_words

    config = GuardConfig(k=run.rank, budget=run.budget)
    attacks = list(run.attacks)
    descriptions = list(run.study.descriptions.select_related("target").order_by("id"))
    texts = {
        str(t.description_id): t
        for t in AnonymizedText.objects.filter(
            description__study=run.study, method=MODEL_METHOD
        ).select_related("description__target")
    }
    total = len(texts)
    stored = set(run.results.values_list("anonymized_text_id", flat=True))
    skipped: dict[str, int] = {}

    skipped_texts: dict[str, str] = {}

    def skip(reason: str, text: AnonymizedText) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1
        skipped_texts[str(text.pk)] = reason

    done = 0
    progress(done, total, "resuming" if stored else "building the background")
    units = _units(descriptions, run.background, run.background_documents, run.folds, run.seed)
    for unit in units:
        chosen = []
        for description_id in unit.test_ids:
            text = texts.get(description_id)
            if text is None:
                continue
            if text.pk in stored:  # guarded by an earlier attempt of this run
                done += 1
            elif text.status == AnonymizedText.Status.RELEASED:
                skip("released", text)
                done += 1
            elif text.description.target.key not in unit.texts_by_person:
                skip("no background for the person", text)
                done += 1
            else:
                chosen.append(text)
        progress(done, total, f"{_label(unit)}: fitting {', '.join(attacks)}")
        if not chosen:
            continue
        if len(unit.texts_by_person) < max(2, run.rank):
            # Too few candidates in this fold to rank anyone at the run's rank: masking could
            # not move the ranks, only damage the text.
            for text in chosen:
                skip(f"fewer persons in the background than the rank, {run.rank}", text)
            done += len(chosen)
            continue
        fitted = fit_attacks(unit.texts_by_person, attacks)
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
            for text, reason in _store_batch(run, batch, results, residual):
                skip(reason, text)
            done += len(batch)
            progress(done, total, f"{_label(unit)}: guarded")
    result = guard_run_finish(run, skipped, skipped_texts)
    progress(total, total, finished_message(result))
    return result


def finished_message(summary: dict[str, Any]) -> str:
    """Return the finished job's line: what the run did, not the last step it was on."""
    skipped = sum(summary.get("skipped", {}).values())
    return (
        f"finished: {summary.get('guarded', 0)} guarded, {summary.get('changed', 0)} changed, "
        f"{summary.get('flagged', 0)} flagged, {skipped} skipped"
    )


def _store_batch(
    run: GuardRun, batch: list[AnonymizedText], results: list[Any], residual: list[list[str]]
) -> list[tuple[AnonymizedText, str]]:
    """Store one batch's new spans and result rows together; return the texts skipped, why."""
    from anonymize.labels import GUARD_CATEGORY

    rows, skipped = [], []
    with transaction.atomic():
        for text, result, words in zip(batch, results, residual, strict=True):
            changed = len(result.spans) != len(text.spans)
            spans_before = list(text.spans)
            if changed:
                try:
                    text = anonymized_text_set_spans(
                        text=text,
                        spans=[span_to_dict(s) for s in result.spans],
                        expected_revision=text.revision,
                        user=None,
                    )
                except StaleRevisionError:
                    skipped.append((text, "edited by a researcher meanwhile"))
                    continue
            rows.append(
                GuardResult(
                    run=run,
                    anonymized_text=text,
                    description_id=text.description_id,
                    target=result.target,
                    rank_before=result.ranks_before,
                    rank_after=result.ranks_after,
                    masked_words=result.masked_words,
                    guard_spans=[s.text for s in result.spans if s.category == GUARD_CATEGORY],
                    # What the attacks still lean on: the researcher may mask more.
                    residual_words=words,
                    changed=changed,
                    spans_before=spans_before if changed else [],
                    revision_after=text.revision if changed else None,
                    flagged=result.flagged,
                    reason=result.reason,
                )
            )
        # A twin worker of the same run (a stale job re-queued) may have stored a row first.
        GuardResult.objects.bulk_create(rows, ignore_conflicts=True)
    return skipped


def guard_run_finish(
    run: GuardRun, skipped: dict[str, int], skipped_texts: dict[str, str] | None = None
) -> dict[str, Any]:
    """Store the run's counts, from its rows (earlier attempts' included); return them.

    `skipped_texts` (text id -> why) lets the review list say why a text was not guarded.
    """
    counts = run.results.aggregate(
        guarded=Count("pk"),
        changed=Count("pk", filter=Q(changed=True)),
        flagged=Count("pk", filter=Q(flagged=True)),
    )
    run.summary = {**counts, "skipped": skipped, "skipped_texts": skipped_texts or {}}
    run.save(update_fields=["summary"])
    return {
        "run": run.pk,
        "rank": run.rank,
        "attacks": run.attacks,
        "budget": run.budget,
        "background": run.background,
        # The job keeps the counts only; the texts' reasons stay with the run.
        **{key: value for key, value in run.summary.items() if key != "skipped_texts"},
    }


def guard_run_undo(*, run: GuardRun, user: Any) -> dict[str, int]:
    """Take a run's masks off again: restore each text it changed to its spans before.

    Only the study's latest run, once; a text released or edited since keeps what it has
    (its revision is no longer the guard's), and is counted as kept. Return the counts.
    """
    if run.undone_at is not None:
        raise GuardRunError("this guard run is already undone")
    if latest_guard_run(run.study) != run:
        raise GuardRunError("only the study's latest guard run can be undone")
    if run.job is not None and run.job.status in jobs.ACTIVE_STATUSES:
        raise GuardRunError("the guard run is still running: cancel it first")
    counts = {"restored": 0, "released": 0, "edited": 0}
    with transaction.atomic():
        for row in run.results.filter(changed=True).select_related("anonymized_text"):
            text = row.anonymized_text
            if text.status == AnonymizedText.Status.RELEASED:
                counts["released"] += 1
                continue
            if text.revision != row.revision_after:
                counts["edited"] += 1
                continue
            anonymized_text_set_spans(
                text=text, spans=row.spans_before, expected_revision=text.revision, user=user
            )
            counts["restored"] += 1
        run.undone_at = timezone.now()
        run.summary = {**run.summary, "undone": counts}
        run.save(update_fields=["undone_at", "summary"])
    return counts


def latest_guard_run(study: Study) -> GuardRun | None:
    """Return the study's latest guard run, with its job."""
    return study.guard_runs.select_related("job").first()


def guard_run_results(run: GuardRun) -> dict[int, GuardResult]:
    """Return the run's rows so far, by anonymized text id (one query)."""
    return {row.anonymized_text_id: row for row in run.results.order_by("pk")}

"""Attack runs: machine re-identification of a study's own texts, stored per text as made.

Where the Django side runs the `attacks` library's attacks on a study's texts (the guard job
runs them in `risk/guarding.py`, the LLM jobs in `llm_intruder/services.py`; the rest reads the
library's vocabulary, metrics and upload formats). A run attacks one or more "methods"
(what is attacked) with one or more attacks:

- every anonymization method present in the study (the model's output, imported Textwash
  texts, researcher-edited texts): the stored texts;
- baselines made on the fly and never served to anyone: `clear` (the original, the ceiling),
  `spacy-ner` (spaCy NER masking) and `model@T` (the study's anonymizer at threshold T).

Background knowledge is either (a) documents uploaded per target person, or (b) the study's
own descriptions, cross-validated in k folds (`attacks.background`): a text is never in its
own background, nor is another text by the same writer about the same person. (b) takes a
knowledge budget (`attacks.budget`): b descriptions per candidate drawn at random, R
resamples, so the attacker knows each candidate as well as b writers do; a text's row then
holds its median rank over the resamples and the share of them that ranked it first.

The loop is the library's, `attacks.crossval.attack_cells`, for both backgrounds and a
budget (whose resamples' draws are one more dimension of its cells): each attack is fitted
once per fold (or draw) and predicts every method's texts there; this module stores each
cell as the loop yields it (one row per description, method and attack, unique in the
database) and answers its one resume hook (`_remaining`), so a crashed run that is retried
skips what is stored and loses nothing. The texts of each method are `risk.method_texts`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count

from attacks.background import BackgroundRecord
from attacks.budget import budget_backgrounds, budget_draws, resampled_outcome
from attacks.config import AttackConfig, ConfigError
from attacks.crossval import Cell, attack_cells, run_backgrounds
from attacks.metrics import trir
from attacks.prediction import Prediction
from attacks.prepared import PreparedTexts
from attacks.registry import ATTACKS, attacks_where, get_attack
from attacks.strongest import STRONGEST, strongest_adversary
from intruder.analysis.text import strip_placeholders, word_tokens
from intruder.bounds import FOLDS, KNOWLEDGE_BUDGET, RESAMPLES, SEED
from intruder.exceptions import IntruderError
from intruder.llm_intruder.services import LLMJobError, llm_settings
from intruder.models import AnonymizedText, Description, Job, Study
from intruder.risk.background_uploads import (
    BackgroundUploadError,
    background_check_size,
    uploaded_background_check,
)
from intruder.risk.frontier import method_tpi
from intruder.risk.method_texts import MethodTexts
from intruder.risk.methods import (
    CLEAR,
    MODEL_AT,
    SPACY_NER,
    method_label,
    model_threshold,
)
from intruder.risk.models import AttackResult, AttackRun
from intruder.services import jobs

if TYPE_CHECKING:
    from anonymize import TextAnonymizer

# Facts about the attacks come from their classes (`attacks.base.Attack`).
CHEAP_ATTACKS: tuple[str, ...] = attacks_where("cheap")
# Every attack the library registers, TRIA first (the method the report leads with); "llm"
# sends the texts to the LLM endpoint of the environment (intruder.llm_intruder.services).
ALL_ATTACKS: tuple[str, ...] = tuple(sorted(ATTACKS, key=lambda name: name != "tria"))
# Beside the model's own threshold, one stricter and one looser anonymization.
BASELINE_THRESHOLDS: tuple[float, ...] = (0.2, 0.6)
DRIVING_WORDS = 8
# Job.Kind.ATTACK_FOLD: one job per fold of a cross-validated run: any worker may take one,
# so N workers share a run (the run's ATTACK_STUDY job runs the folds no other worker took
# and waits for the rest).
_ACTIVE_OR_DONE = frozenset({Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.SUCCEEDED})
# One instance serves every fold where its class says so; TRIA gets a fresh one per fold.
REUSABLE_ATTACKS = frozenset(attacks_where("reusable"))

# Config keys that name files and folders on the server: set by operators (CLI, benchmark),
# never by an API client.
SERVER_CONFIG_KEYS = frozenset(
    {"cache_dir", "output_folder_path", "data_file_path", "base_model_name"}
)

AttackFactory = Callable[[str, Any], Any]


def _server_paths(run: AttackRun) -> dict[str, str]:
    """Return the run's cache and working folders under INTRUDER_ATTACK_DIR (not the worker's
    current folder): the cache is shared by every run, the working folder is the run's own."""
    root = Path(settings.INTRUDER_ATTACK_DIR)
    return {
        "cache_dir": str(root / "cache"),
        "output_folder_path": str(root / "runs" / str(run.pk)),
    }


class AttackRunError(IntruderError):
    """Settings an attack run cannot use; the message says which and why."""

    api_field = "non_field_errors"


class AttackRunBusy(AttackRunError):
    """The study already has an attack run queued or running (one at a time per study)."""

    status_code = 409
    api_field = None


def study_methods(study: Study) -> list[str]:
    """Return the anonymization methods the study holds texts of, sorted."""
    return sorted(
        AnonymizedText.objects.filter(description__study=study)
        .order_by("method")  # not the model's ordering, which would make rows distinct
        .values_list("method", flat=True)
        .distinct()
    )


def baseline_methods() -> list[str]:
    """Return the baselines made on the fly: clear text, spaCy NER, model at other thresholds."""
    return [CLEAR, SPACY_NER, *(f"{MODEL_AT}{t:g}" for t in BASELINE_THRESHOLDS)]


def _validate(study: Study, attacks: Sequence[str], methods: Sequence[str], folds: int) -> None:
    if not attacks:
        raise AttackRunError("choose at least one attack")
    unknown = sorted(set(attacks) - set(ALL_ATTACKS))
    if unknown:
        raise AttackRunError(f"unknown attack(s) {unknown}; choose from {list(ALL_ATTACKS)}")
    if "llm" in attacks:
        try:
            llm_settings()
        except LLMJobError as error:
            raise AttackRunError(f"llm attack: {error}") from None
    if not methods:
        raise AttackRunError("choose at least one text version to attack")
    present = set(study_methods(study))
    for method in methods:
        if method.startswith(MODEL_AT):
            try:
                model_threshold(method)
            except ValueError as error:
                raise AttackRunError(f"{method!r}: {error}") from None
        elif method not in present and method not in (CLEAR, SPACY_NER):
            raise AttackRunError(f"the study has no texts of method {method!r}")
    if not FOLDS.holds(folds):
        raise AttackRunError(FOLDS.message)


def attack_run_start(
    *,
    study: Study,
    user: Any,
    attacks: Sequence[str],
    methods: Sequence[str],
    background: str = AttackRun.Background.CROSS_VALIDATED,
    folds: int = FOLDS.default,
    seed: int = SEED.default,
    background_documents: dict[str, str] | None = None,
    distractor_documents: dict[str, str] | None = None,
    config: dict[str, Any] | None = None,
    purpose: str = AttackRun.Purpose.REPORT,
    knowledge_budget: int | None = None,
    budget_resamples: int | None = None,
) -> AttackRun:
    """Validate the settings, store the run and queue its job.

    `knowledge_budget` (b) keeps b of the study's descriptions per candidate, drawn anew in
    each of `budget_resamples` resamples (default 10); None keeps every description outside
    the fold.

    `distractor_documents` (name -> text) are persons outside the study added as candidates
    to every background (the open-world ladder). Those that are study persons (by key or
    name) or whose text is a study description are dropped, and named in the run's summary.
    """
    attacks, methods = list(dict.fromkeys(attacks)), list(dict.fromkeys(methods))
    _validate(study, attacks, methods, int(folds))
    if not study.descriptions.exists():
        raise AttackRunError("the study has no descriptions to attack")
    documents = background_documents or {}
    if background == AttackRun.Background.UPLOADED:
        try:
            uploaded_background_check(study, documents, persons=1, strangers=False)
        except BackgroundUploadError as error:
            raise AttackRunError(str(error)) from None
    elif background != AttackRun.Background.CROSS_VALIDATED:
        raise AttackRunError(f"unknown background {background!r}")
    try:
        AttackConfig.from_dict(config or {})
    except (ConfigError, TypeError, ValueError) as error:
        raise AttackRunError(f"attack config: {error}") from None
    if not SEED.holds(seed):
        raise AttackRunError(SEED.message)
    distractors, dropped = distractors_outside_study(study, distractor_documents or {})
    budget_resamples = _validate_budget(
        knowledge_budget,
        budget_resamples,
        background=background,
        attacks=attacks,
    )
    for name, text in distractors.items():
        if "\x00" in name or "\x00" in text:  # PostgreSQL stores no NUL in JSON
            raise AttackRunError(f"distractor {name[:40]!r}: holds a NUL character")
    try:
        background_check_size(distractors)
    except BackgroundUploadError as error:
        raise AttackRunError(f"distractors: {error}") from None
    try:
        return _attack_run_create(
            study=study,
            user=user,
            purpose=purpose,
            attacks=attacks,
            methods=methods,
            background=background,
            background_documents=documents,
            distractor_documents=distractors,
            folds=int(folds),
            seed=int(seed),
            knowledge_budget=knowledge_budget,
            budget_resamples=budget_resamples,
            config=config or {},
            summary={"distractors_dropped": dropped} if dropped else {},
        )
    except jobs.JobAlreadyActive as busy:
        raise AttackRunBusy(
            f"attack run job {busy.job.pk if busy.job else ''} is still "
            f"{busy.job.status if busy.job else 'active'} for this study: wait for it or "
            "cancel it first"
        ) from None


def _validate_budget(
    budget: int | None,
    resamples: int | None,
    *,
    background: str,
    attacks: Sequence[str],
) -> int:
    """Return the resamples of a run's knowledge budget; raise AttackRunError for bad ones."""
    if budget is None:
        if resamples not in (None, 1):
            raise AttackRunError("resamples need a knowledge budget (b descriptions per person)")
        return 1
    if not KNOWLEDGE_BUDGET.holds(budget):
        raise AttackRunError(KNOWLEDGE_BUDGET.message)
    if background != AttackRun.Background.CROSS_VALIDATED:
        raise AttackRunError("a knowledge budget draws from the study's own descriptions")
    slow = sorted(set(attacks) - REUSABLE_ATTACKS)
    if slow:
        raise AttackRunError(f"a knowledge budget takes the retrieval attacks, not {slow}")
    resamples = RESAMPLES.default if resamples is None else int(resamples)
    if not RESAMPLES.holds(resamples):
        raise AttackRunError(RESAMPLES.message)
    return resamples


@transaction.atomic
def _attack_run_create(*, study: Study, user: Any, **fields: Any) -> AttackRun:
    """Store the run and queue its job in one transaction (both or neither)."""
    run = AttackRun(study=study, created_by=user, **fields)
    run.full_clean()
    run.save()
    # TRIA trains a model per fold: such a run goes to the GPU queue where there is one.
    params = {"run": run.pk, **({"gpu": True} if "tria" in run.attacks else {})}
    run.job = jobs.job_enqueue(
        kind=Job.Kind.ATTACK_STUDY, study=study, params=params, created_by=user
    )
    run.save(update_fields=["job"])
    return run


def risk_check_start(
    *,
    study: Study,
    user: Any,
    folds: int = FOLDS.default,
    attacks: Sequence[str] = CHEAP_ATTACKS,
    config: dict[str, Any] | None = None,
) -> AttackRun:
    """Queue the pre-release risk check: cheap attacks on the study's texts, background (b)."""
    methods = study_methods(study)
    if not methods:
        raise AttackRunError("the study has no anonymized texts to check yet")
    return attack_run_start(
        study=study,
        user=user,
        attacks=attacks,
        methods=methods,
        folds=folds,
        config=config,
        purpose=AttackRun.Purpose.RISK_CHECK,
    )


DISTRACTOR_PREFIX = "distractor:"


def _fold_name(name: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in name.casefold()).split())


def distractors_outside_study(
    study: Study, documents: dict[str, str]
) -> tuple[dict[str, str], list[str]]:
    """Return the distractors that are not study persons or texts, and the names dropped."""
    people = set()
    for key, name in study.targets.values_list("key", "name"):
        people |= {_fold_name(key), _fold_name(name)}
    texts = {t.strip() for t in study.descriptions.values_list("text", flat=True)}
    kept, dropped = {}, []
    for name, text in documents.items():
        if _fold_name(name) in people or str(text).strip() in texts:
            dropped.append(name)
        elif str(text).strip():
            kept[name] = str(text)
    return kept, dropped


def with_distractors(background: dict[str, list[str]], run: AttackRun) -> dict[str, list[str]]:
    """Return a unit's background with the run's distractors added as candidates.

    Their keys carry DISTRACTOR_PREFIX, so a distractor is never a study person's (and never
    a text's own) background.
    """
    extra = {f"{DISTRACTOR_PREFIX}{n}": [t] for n, t in (run.distractor_documents or {}).items()}
    return {**background, **extra}


def _backgrounds(run: AttackRun, descriptions: list[Description]) -> list[Any]:
    """Return the run's folds, distractors added to each: its one uploaded background, the k
    folds of the study's own descriptions, or under a knowledge budget the draws of its R
    resamples (each a fold of `attacks.crossval`, attacked by the same loop)."""
    records = background_records(descriptions)
    if run.knowledge_budget is not None:
        budget, resamples = run.knowledge_budget, run.budget_resamples
        draws = budget_draws(records, budget, resamples=resamples, folds=run.folds, seed=run.seed)
        units = budget_backgrounds(records, draws)
    else:
        uploaded = (
            {key: [text] for key, text in run.background_documents.items()}
            if run.background == AttackRun.Background.UPLOADED
            else None
        )
        units = run_backgrounds(records, uploaded=uploaded, folds=run.folds, seed=run.seed)
    return [
        dataclasses.replace(fold, texts_by_person=with_distractors(fold.texts_by_person, run))
        for fold in units
    ]


def background_records(descriptions: list[Description]) -> list[BackgroundRecord]:
    """Return the descriptions as `attacks.background` records (writer known or None)."""
    return [
        BackgroundRecord(
            text_id=str(d.pk),
            target=d.target.key,
            writer=None if d.writer_id is None else str(d.writer_id),
            text=d.text,
        )
        for d in descriptions
    ]


def masked_share(original: str, anonymized: str) -> float | None:
    """Return the share of the original's words that the anonymized text no longer has.

    Words as `analysis.text.word_tokens` counts them, placeholders removed first: the
    Table 9 "proportion anonymised", as a share in [0, 1].
    """
    words = len(word_tokens(original))
    if not words:
        return None
    kept = len(word_tokens(strip_placeholders(anonymized)))
    return min(1.0, max(0.0, 1.0 - kept / words))


def expected_results(run: AttackRun, texts: MethodTexts, ids: Iterable[int]) -> int:
    """Return how many result rows a finished run holds."""
    ids = set(ids)
    return len(run.attacks) * sum(len(texts.available(m) & ids) for m in run.methods)


def _fold_assignment(run: AttackRun, descriptions: list[Description]) -> list[Description]:
    """Return the descriptions this run attacks, fixed at its first start.

    Recorded in `summary["description_ids"]`, so a retry attacks the same texts in the same
    folds even if descriptions were added meanwhile.
    """
    recorded = run.summary.get("description_ids")
    if recorded is None:
        run.summary = {**run.summary, "description_ids": [d.pk for d in descriptions]}
        AttackRun.objects.filter(pk=run.pk).update(summary=run.summary)
        return descriptions
    keep = set(recorded)
    return [d for d in descriptions if d.pk in keep]


def execute_attack_run(
    *,
    run: AttackRun,
    progress: Callable[..., None],
    attack_factory: AttackFactory | None = None,
    anonymizer: TextAnonymizer | None = None,
    fold_indices: Collection[int] | None = None,
    finish: bool = True,
) -> dict[str, Any]:
    """Run every attack on every method's texts, storing each cell's predictions as made.

    The loop is `attacks.crossval.attack_cells`, over the run's folds or, under a knowledge
    budget, over the draws of its resamples; this stores what it yields. `fold_indices`
    limits the work to those folds (a fold job); `finish` stores the run's TRIR table, which
    needs every fold, so fold jobs leave it to the run's own job.
    """
    descriptions = list(
        Description.objects.filter(study=run.study).select_related("target").order_by("pk")
    )
    descriptions = _fold_assignment(run, descriptions)
    key_of = {d.pk: d.target.key for d in descriptions}
    texts = MethodTexts(descriptions, anonymizer)
    total = expected_results(run, texts, key_of)
    stored = run.results.count()
    progress(stored, total, "resuming" if stored else "starting")
    prepared = PreparedTexts(AttackConfig.from_dict({**_server_paths(run), **run.config}))
    # The process's reusable attacks (not a test's factory's): fold jobs and later runs of
    # the same settings in this worker reuse the loaded encoder and the embeddings it made.
    instances = _REUSED.setdefault(_config_key(prepared), {}) if attack_factory is None else {}
    backgrounds = [
        b
        for b in _backgrounds(run, descriptions)
        if fold_indices is None or b.index in fold_indices
    ]
    llm_stats: dict[str, Any] = {}
    for cell in attack_cells(
        prepared,
        backgrounds,
        run.attacks,
        run.methods,
        texts=texts.raw,
        true_names={str(i): key for i, key in key_of.items()},
        remaining=_remaining(run, texts),
        factory=attack_factory or get_attack,
        reuse=instances,
        reusable=REUSABLE_ATTACKS,
        # A fit worth announcing is a slow one (TRIA trains for minutes); a budget's draws
        # take only the retrieval attacks, fitted in a fraction of a second each.
        on_fit=None
        if run.knowledge_budget is not None
        else lambda fold, name: progress(
            run.results.count(), total, f"{_where(run, name, fold.index)}: fitting"
        ),
    ):
        chosen = texts.texts(cell.method, [int(i) for i in cell.texts])
        AttackResult.objects.bulk_create(_result_rows(run, cell, chosen), ignore_conflicts=True)
        stored = run.results.count()
        where = _where(run, cell.attack_name, cell.fold)
        progress(stored, total, f"{where}: {method_label(cell.method)}")
        if cell.attack is not None and "llm" in getattr(cell.attack, "stats", {}):
            # The model, every sampling setting, tokens and failures of the LLM attack.
            llm_stats[f"fold {cell.fold}" if cell.fold is not None else "all"] = cell.attack.stats[
                "llm"
            ]
    if llm_stats:
        _store_llm_stats(run, llm_stats)
    if finish:
        progress(stored, total, "utility (TPI) of every method")
        _finish(run, texts)
    return {"run": run.pk, "results": run.results.count(), "expected": total}


def _where(run: AttackRun, name: str, fold: int | None) -> str:
    """Return where the loop is, for progress: the attack and its fold, or its budget."""
    if run.knowledge_budget is not None:
        return f"{name}: b = {run.knowledge_budget}, {run.budget_resamples} resamples"
    return name if fold is None else f"{name}, fold {fold + 1}/{run.folds}"


def _remaining(run: AttackRun, texts: MethodTexts) -> Callable[..., list[str]]:
    """Return the run's resume hook: a cell's texts (of those the method has) not yet stored.

    A cell whose count is complete needs no query; another asks for the ids it has.
    """
    done = {
        (row["fold"], row["attack"], row["method"]): row["n"]
        for row in run.results.values("fold", "attack", "method").annotate(n=Count("pk"))
    }

    def remaining(fold: int | None, name: str, method: str, ids: list[str]) -> list[str]:
        available = texts.available(method) & {int(i) for i in ids}
        if done.get((fold, name, method), 0) >= len(available):
            return []
        have = set(
            run.results.filter(
                attack=name, method=method, description_id__in=available
            ).values_list("description_id", flat=True)
        )
        return [str(i) for i in sorted(available - have)]

    return remaining


# config key -> attack name -> a fitted-before instance of a REUSABLE_ATTACKS attack.
_REUSED: dict[str, dict[str, Any]] = {}


def _config_key(prepared: Any) -> str:
    return json.dumps(dataclasses.asdict(prepared.attack_config()), sort_keys=True, default=str)


def _store_llm_stats(run: AttackRun, llm_stats: dict[str, Any]) -> None:
    """Add the LLM attack's model, sampling settings, tokens and failures per fold."""
    with transaction.atomic():
        locked = AttackRun.objects.select_for_update().get(pk=run.pk)
        locked.summary = {**locked.summary, "llm": {**locked.summary.get("llm", {}), **llm_stats}}
        locked.save(update_fields=["summary"])


def _finish(run: AttackRun, texts: MethodTexts | None = None) -> None:
    """Store the run's TRIR and TPI tables (every fold's results are in)."""
    if texts is None:
        descriptions = Description.objects.filter(study=run.study).select_related("target")
        texts = MethodTexts(list(descriptions.order_by("pk")))
    run.refresh_from_db()
    run.summary = {**run.summary, "trir": trir_table(run), "tpi": _method_tpi(run, texts)}
    run.save(update_fields=["summary"])


def _fold_jobs(run: AttackRun, parent: Job) -> list[Job]:
    """Return the run's fold jobs, creating the missing ones and re-queueing failed ones."""
    existing = {
        job.params.get("fold"): job
        for job in Job.objects.filter(kind=Job.Kind.ATTACK_FOLD, params__run=run.pk).order_by("pk")
    }
    fold_jobs = []
    for fold in range(run.folds):
        job = existing.get(fold)
        if job is None:
            # No study: a fold job is a part of the run's job, not a job of its own in the
            # study's lists (nor in a one-active-job-per-study-and-kind rule).
            job = jobs.job_enqueue(
                kind=Job.Kind.ATTACK_FOLD,
                params={
                    "run": run.pk,
                    "fold": fold,
                    "parent": parent.pk,
                    **({"gpu": True} if parent.params.get("gpu") else {}),
                },
                created_by=run.created_by,
            )
        elif job.status == Job.Status.FAILED:
            job = jobs.job_retry(job=job)
        fold_jobs.append(job)
    return fold_jobs


def execute_attack_run_shared(
    *,
    run: AttackRun,
    job: Job,
    progress: Callable[..., None],
    poll_interval_s: float = 1.0,
) -> dict[str, Any]:
    """Run a cross-validated run as one job per fold, shared with every idle worker.

    This job queues the fold jobs, runs here each one no other worker has claimed, waits for
    those that others run, then stores the TRIR table. A fold job whose worker died is
    re-queued once its heartbeat is stale (and this job may take it); a failed fold fails
    this job, and retrying this job re-queues the failed folds, which resume from what they
    stored. Results and progress are those of a run in one job.
    """
    if run.background != AttackRun.Background.CROSS_VALIDATED or run.knowledge_budget is not None:
        # A budget's resamples deal the texts anew each time: no fold is a unit of work.
        return execute_attack_run(run=run, progress=progress)
    fold_jobs = _fold_jobs(run, job)
    ids = [fold_job.pk for fold_job in fold_jobs]
    while True:
        for fold_job in Job.objects.filter(pk__in=ids, status=Job.Status.QUEUED).order_by("pk"):
            jobs.job_execute(fold_job.pk, echo=progress)
        states = list(Job.objects.filter(pk__in=ids).order_by("pk"))
        failed = [s for s in states if s.status not in _ACTIVE_OR_DONE]
        if failed:
            raise AttackRunError(
                f"fold {failed[0].params['fold'] + 1} of {run.folds} failed "
                f"({failed[0].message}); retry the run to resume it"
            )
        if all(s.status == Job.Status.SUCCEEDED for s in states):
            break
        running = [s for s in states if s.status == Job.Status.RUNNING]
        total = max(s.progress_total for s in states)
        progress(
            run.results.count(),
            total,
            f"{len(running)} fold(s) running on other workers: "
            + ", ".join(s.worker for s in running),
        )
        jobs.jobs_requeue_stale()
        time.sleep(poll_interval_s)
    _finish(run)
    expected = max(s.result.get("expected", 0) for s in states)
    results = run.results.count()
    progress(results, expected, "finished")
    return {"run": run.pk, "results": results, "expected": expected}


def _method_tpi(run: AttackRun, texts: MethodTexts) -> dict[str, Any]:
    """Return each method's TPI for the report's frontier (`intruder.risk.frontier`)."""
    originals = {pk: d.text for pk, d in texts.descriptions.items()}
    by_method = {
        m: {i: t for i, (t, _) in texts.texts(m, sorted(texts.available(m))).items()}
        for m in run.methods
    }
    return method_tpi(originals, by_method)


def _result_rows(
    run: AttackRun, cell: Cell, chosen: dict[int, tuple[str, int | None]]
) -> list[AttackResult]:
    """Return a cell's unsaved result rows (`chosen`: id -> (text, stored text id)).

    A TF-IDF or BM25 hit also records the words that carry the match (`shared_terms`):
    what a reviewer should mask. A resampled cell (a knowledge budget) gives each text that
    a draw attacked its outcome over the draws (`attacks.budget.resampled_outcome`).
    """
    originals = dict(Description.objects.filter(pk__in=list(chosen)).values_list("pk", "text"))
    rows = []
    for i, (text, stored_id) in chosen.items():
        row = AttackResult(
            run=run,
            description_id=i,
            anonymized_text_id=stored_id,
            method=cell.method,
            attack=cell.attack_name,
            fold=cell.fold,
            masked_share=masked_share(originals[i], text),
        )
        if cell.draws is not None:
            if not cell.draws.get(str(i)):
                continue
            outcome = resampled_outcome([prediction for _, prediction in cell.draws[str(i)]])
            row.predicted_key, row.true_rank = outcome.predicted, outcome.true_rank
            row.true_prob, row.hit_share, row.top_k = outcome.true_prob, outcome.hit_share, []
        elif (prediction := cell.predictions[str(i)]) is not None:
            row.predicted_key, row.true_rank = prediction.predicted_name, prediction.true_rank
            row.true_prob = prediction.true_prob
            row.top_k = [[n, round(float(p), 6)] for n, p in prediction.top_k]
            row.driving_words = _driving_words(
                cell.attack, cell.documents.get(str(i), ""), row.predicted_key, row.true_rank
            )
        rows.append(row)
    return rows


def _driving_words(attack: Any, document: str, predicted: str, rank: int | None) -> list[str]:
    """Return the words behind a correct match: TF-IDF's and BM25's exact shares of their
    scores. Dense retrieval and TRIA compare meaning, not words, and give none (the review
    page says so beside their flags)."""
    if rank != 1 or not hasattr(attack, "shared_terms"):
        return []
    return [term for term, _ in attack.shared_terms(document, predicted, top=DRIVING_WORDS)]


def trir_table(run: AttackRun) -> dict[str, dict[str, dict[str, Any]]]:
    """Return method -> attack (and "strongest") -> {trir, n, correct, cap} of a run."""
    by_method: dict[str, dict[str, list[Any]]] = {}
    for result in run.results.select_related("description__target").order_by("pk"):
        by_method.setdefault(result.method, {}).setdefault(result.attack, []).append(
            prediction_of(result)
        )
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for method, by_attack in by_method.items():
        rows = {attack: trir(preds) for attack, preds in sorted(by_attack.items())}
        rows[STRONGEST] = trir(strongest_adversary(by_attack))
        table[method] = {
            attack: {"trir": r.trir_pct, "n": r.n, "correct": r.correct, "cap": r.cap}
            for attack, r in rows.items()
        }
    if run.knowledge_budget is not None:
        # Under a budget "trir" counts a text whose median rank over the resamples is 1, the
        # run's one TRIR (every table of the report). Beside it, and never called a TRIR, the
        # mean share of resamples that ranked the person first (the crowd_intruder
        # benchmark's averaged rate).
        shares: dict[tuple[str, str], list[float]] = {}
        for method, attack, share in run.results.values_list("method", "attack", "hit_share"):
            shares.setdefault((method, attack), []).append(share or 0.0)
        for (method, attack), values in shares.items():
            table[method][attack]["mean_hit_share_pct"] = 100.0 * sum(values) / len(values)
            table[method][attack]["resamples"] = run.budget_resamples
    return table


def prediction_of(result: AttackResult) -> Any:
    """Return a stored result as an `attacks.Prediction` (doc id = description id)."""
    true_key = result.description.target.key
    predicted = result.predicted_key
    if result.hit_share is not None and (predicted == true_key) != (result.true_rank == 1):
        # A budget result stored before issue 46 kept the modal prediction, which can name
        # the true person while the median rank is not 1: the median rank decides.
        predicted = true_key if result.true_rank == 1 else ""
    return Prediction(
        doc_id=str(result.description_id),
        true_name=true_key,
        predicted_name=predicted,
        true_rank=result.true_rank,
        true_prob=result.true_prob,
        top_k=[(str(n), float(p)) for n, p in result.top_k],
    )

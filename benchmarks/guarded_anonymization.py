"""Risk-guided anonymization on Textwash study 2: what k-anonymity against the machine costs.

Usage (heavy: run under the shared lock)::

    flock /tmp/heavy.lock python benchmarks/guarded_anonymization.py --out DIR

The privacy-utility frontier. For each method (clear text, Textwash's outputs, spaCy NER
masking, the project's model at its own threshold and at `MODEL_THRESHOLDS`, model +
deterministic rules, the guard at several k on top of model + rules, the same guarded masks
with a neutral placeholder instead of REIDENTIFYING_N, and a blunt baseline masking every
non-stop word) it reports TRIR under every held-out attack and the strongest adversary with
its label-permutation null (`strongest_null_pct`), the share of words masked, TPI
(`anonymize.tpi`; `tpi_metric` names the IC source: TPI-wordfreq offline, TPI with
`--masked-lm DIR`), the guard's transfer gap per held-out attack, construct loss (POS
frequencies, `intruder.analysis.construct_loss`) and the time.

The guard must not grade itself. Background (b), k-fold (`attacks.background`, 5 folds):
each text is attacked with the other folds' descriptions of the 20 persons. Inside every
fold, each person's background descriptions are split in two halves: the guard's attacks
(TF-IDF and BM25) are fitted on the guard half only, and the attackers that measure TRIR
(TF-IDF, BM25 and dense retrieval) on the evaluation half only. The guard's own TRIR (its
attacks, its half) is reported beside it as `trir_guard`.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import difflib
import json
import os
import platform
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from anonymize import Anonymizer, Span, render  # noqa: E402
from anonymize.labels import validate_categories  # noqa: E402
from anonymize.rules import RULE_ORDER  # noqa: E402
from attacks import AttackConfig, trir  # noqa: E402
from attacks.background import BackgroundRecord, cross_validation_folds  # noqa: E402
from attacks.strongest import (  # noqa: E402
    STRONGEST,
    reidentified_by,
    strongest_adversary,
    strongest_permutation_null,
)
from benchmarks.human_vs_machine_textwash import TRIA_BENCHMARK_CONFIG  # noqa: E402
from guard import GuardConfig, GuardItem, fit_attacks, guard_texts  # noqa: E402
from guard.evidence import PersonEvidence  # noqa: E402
from research_data import textwash_study_dir  # noqa: E402
from research_data.json_lines import read_json_lines  # noqa: E402

GUARD_ATTACKS = ("tfidf", "bm25")
EVAL_ATTACKS = ("tfidf", "bm25", "dense", "tria")
# k = 15 (the person among the 6 least likely of 20) is beyond the issue's list: it shows
# how far the curve goes within the budget.
GUARD_KS = (2, 5, 10, 15)
# Words the guard's background never saw are masked first when rarer than this in English
# (wordfreq Zipf; 3.5 is about once per 3 million words: "fragrance", "royalist").
RARE_ZIPF = 3.5
WORD = re.compile(r"\w+")


# The model's P(PSI) threshold swept for the frontier (the shipped model's own is 0.4; lower
# masks more).
MODEL_THRESHOLDS = (0.1, 0.2, 0.7)
# The guard's masks rendered with a neutral category placeholder instead of REIDENTIFYING_N,
# which tells an intruder the word was identifying.
NEUTRAL_CATEGORY = "OTHER_IDENTIFYING_ATTRIBUTE"
# Paper 002's "robust" level: TRIR about 9 % (El Emam 2013), k = 11 for one attacker.
ROBUST_TRIR_PCT = 9.0


def method_names(ks: tuple[int, ...]) -> tuple[str, ...]:
    """Return the methods in report order."""
    return (
        "clear",
        "textwash",
        "spacy",
        "model",
        *(f"model_t{t:g}" for t in MODEL_THRESHOLDS),
        "model+rules",
        *(f"guarded_k{k}" for k in ks),
        *(f"guarded_k{k}_neutral" for k in ks),
        "all_content_words",
    )


def neutral_render(text: str, spans: list[Span]) -> str:
    """Render the guard's spans with the neutral category placeholder (same masks)."""
    from anonymize.labels import GUARD_CATEGORY

    return render(
        text,
        [
            dataclasses.replace(s, category=NEUTRAL_CATEGORY) if s.category == GUARD_CATEGORY else s
            for s in spans
        ],
    )


def chance_levels(predictions_by_attack: dict[str, list], persons: int, seed: int) -> dict:
    """Return what the strongest of the attackers scores by chance on these texts.

    Independent random rankings give 1 - (1 - 1/n)^m; the label-permutation null keeps the
    attackers' real predictions (and their agreement) and draws each text's person at random.
    """
    m = len(predictions_by_attack)
    top = {a: {p.doc_id: p.predicted_name for p in ps} for a, ps in predictions_by_attack.items()}
    names = sorted({p.true_name for ps in predictions_by_attack.values() for p in ps})
    null_mean, null_p95 = strongest_permutation_null(top, names, seed)
    return {
        "one_attack_pct": round(100.0 / persons, 2),
        "strongest_independent_random_rankings_pct": round(100 * (1 - (1 - 1 / persons) ** m), 2),
        "strongest_label_permutation_mean_pct": round(null_mean, 2),
        "strongest_label_permutation_p95_pct": round(null_p95, 2),
    }


def neural_precision() -> contextlib.AbstractContextManager:
    """Return bf16 autocast for the dense encoder where the CPU has native bf16, else a no-op.

    The same lever the anonymizer and TRIA use (`precision="auto"`); it halves the dense
    attack's encoding time here, which dominates the benchmark.
    """
    import torch

    from model_runtime.precision import cpu_supports_bf16

    if cpu_supports_bf16():
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def load_study(path: Path, limit_per_person: int | None) -> list[dict]:
    """Return the study rows, optionally the first `limit_per_person` texts of each person."""
    rows = [row for _, row in read_json_lines(path)]
    if limit_per_person:
        seen: dict[str, int] = {}
        kept = []
        for row in rows:
            seen[row["person"]] = seen.get(row["person"], 0) + 1
            if seen[row["person"]] <= limit_per_person:
                kept.append(row)
        rows = kept
    return rows


def words_masked_share(original: str, anonymized: str) -> tuple[int, int]:
    """Return (original words not kept in the anonymized text, original words).

    One measure for every method, spans or not (Textwash's outputs have none): words are
    aligned with difflib, and an original word counts as masked unless it survives unchanged.
    """
    before = WORD.findall(original)
    after = WORD.findall(anonymized)
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    kept = sum(block.size for block in matcher.get_matching_blocks())
    return len(before) - kept, len(before)


def split_halves(ids: list[str], seed: int) -> tuple[list[str], list[str]]:
    """Return a seeded (guard half, evaluation half) of one person's background ids."""
    shuffled = sorted(ids)
    random.Random(seed).shuffle(shuffled)
    return shuffled[0::2], shuffled[1::2]


def fold_halves(
    fold: Any, by_id: dict[str, dict], seed: int
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Return one fold's (guard, evaluation) backgrounds: person -> original texts of each half."""
    guard_background: dict[str, list[str]] = {}
    eval_background: dict[str, list[str]] = {}
    for person, background_ids in fold.background_ids.items():
        guard_ids, eval_ids = split_halves(background_ids, seed + fold.index)
        guard_background[person] = [by_id[i]["original"].strip() for i in guard_ids]
        eval_background[person] = [by_id[i]["original"].strip() for i in eval_ids]
    return guard_background, eval_background


def content_word_spans(text: str) -> list[Span]:
    """Return a span over every word that is not a stop word (the blunt baseline)."""
    from guard.document import prepare_documents

    document = prepare_documents([("x", text, "x", [])], keep_stop_words=False)[0]
    return [
        Span(t.start, t.end, t.text, "OTHER_IDENTIFYING_ATTRIBUTE", "", 1.0)
        for t in document.tokens
        if t.candidate
    ]


def construct_loss_summary(originals: list[str], anonymized: list[str], frequencies) -> dict:
    """Return the Table-2 construct-loss rows and how many POS variables changed (BF10 > 3)."""
    import pandas as pd

    from intruder.analysis.construct_loss import construct_loss

    table = construct_loss(
        pd.DataFrame({"original": originals, "anonymized": anonymized}),
        original_frequencies=frequencies,
    )
    changed = table.loc[table["bf10"] > 3, "pos"].tolist()  # inf (|t| huge) counts as > 3
    ntok = table.set_index("pos").loc["ntok"]
    table["bf10"] = table["bf10"].replace(float("inf"), 1e308)  # JSON has no Infinity
    return {
        "pos_variables_changed_bf10_gt_3": len(changed),
        "variables": len(table),
        "changed": changed,
        "mean_ntok_original": float(ntok["mean_original"]),
        "mean_ntok_anonymized": float(ntok["mean_anonymized"]),
        "table": json.loads(table.to_json(orient="records")),
    }


def _bf16() -> bool:
    from model_runtime.precision import cpu_supports_bf16

    return cpu_supports_bf16()


def main() -> int:
    """Run the benchmark and write DIR/summary.json, DIR/texts.jsonl and the plot."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--data", default=None, help="study2.jsonl (default: shared data)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--budget", type=float, default=0.4, help="guard budget (share of words)")
    parser.add_argument("--limit-per-person", type=int, default=None, help="smoke runs only")
    parser.add_argument("--no-construct-loss", action="store_true")
    parser.add_argument(
        "--eval-attacks", default=",".join(EVAL_ATTACKS), help="held-out attackers (comma list)"
    )
    parser.add_argument(
        "--guard-attacks", default=",".join(GUARD_ATTACKS), help="attacks the guard consults"
    )
    parser.add_argument("--ks", default=",".join(map(str, GUARD_KS)), help="guard k values")
    parser.add_argument(
        "--rare-zipf", type=float, default=RARE_ZIPF, help="0 = no rare-unseen masking"
    )
    parser.add_argument(
        "--no-stop-words", action="store_true", help="guard never masks kept stop words"
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=0,
        help="guard also against its attacks fitted on this many random halves of its background",
    )
    parser.add_argument(
        "--evidence-z",
        type=float,
        default=0.0,
        help="first mask the person's generalizing evidence: words whose log-odds z for the "
        "person across the guard half's texts is at least this (guard.evidence; 0 = off)",
    )
    parser.add_argument(
        "--masked-lm",
        default=None,
        help="local masked-LM folder for TPI (paper: bert-base-uncased); default TPI-wordfreq",
    )
    parser.add_argument("--only-folds", default=None, help="comma list of fold indexes (subsets)")
    args = parser.parse_args()
    eval_attacks = tuple(a for a in args.eval_attacks.split(",") if a)
    guard_ks = tuple(int(k) for k in args.ks.split(","))
    guard_attack_names = tuple(a for a in args.guard_attacks.split(",") if a)
    methods = method_names(guard_ks)
    rare_zipf = args.rare_zipf or None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(args.data) if args.data else textwash_study_dir() / "study2.jsonl"
    if not data.is_file():
        print(f"error: {data} not found (set SHARED_DATA_DIR)", file=sys.stderr)
        return 2
    started = time.perf_counter()
    rows = load_study(data, args.limit_per_person)
    by_id = {r["id"]: r for r in rows}
    ids = [r["id"] for r in rows]
    target = {r["id"]: r["person"] for r in rows}
    seconds: dict[str, float] = {m: 0.0 for m in methods}
    log = lambda message: print(f"[{time.perf_counter() - started:7.1f}s] {message}", flush=True)  # noqa: E731

    # 1. Folds: background (b), each fold's background split into a guard and an eval half
    # below. A subset run (--only-folds) attacks those folds' texts with the same folds.
    records = [BackgroundRecord(i, target[i], None, by_id[i]["original"]) for i in ids]
    folds = cross_validation_folds(records, folds=args.folds, seed=args.seed)
    config = AttackConfig(cache_dir=str(out / "cache"), seed=args.seed)
    if "tria" in eval_attacks:
        config = dataclasses.replace(config, **TRIA_BENCHMARK_CONFIG)
    if args.only_folds:
        keep = {int(f) for f in args.only_folds.split(",")}
        folds = [f for f in folds if f.index in keep]
        ids = [i for f in folds for i in f.test_ids]

    # 2. Anonymize: the model once, its spans with and without the rules.
    log(f"{len(rows)} texts, {len(set(target.values()))} persons; anonymizing")
    anonymizer = Anonymizer.load(rules="none")
    tick = time.perf_counter()
    predictions = anonymizer.predict_words([by_id[i]["original"] for i in ids])
    model_seconds = time.perf_counter() - tick
    every = validate_categories(None)
    spans_of: dict[str, dict[str, list[Span]]] = {"model": {}, "model+rules": {}}
    for method, rules in (("model", ()), ("model+rules", RULE_ORDER)):
        tick = time.perf_counter()
        anonymizer.rules = rules
        for doc_id, prediction in zip(ids, predictions, strict=True):
            text = by_id[doc_id]["original"]
            spans_of[method][doc_id] = anonymizer.find_spans(
                text, prediction, every, anonymizer.threshold
            )
        seconds[method] = model_seconds + time.perf_counter() - tick
    anonymizer.rules = ()
    for threshold in MODEL_THRESHOLDS:
        method = f"model_t{threshold:g}"
        tick = time.perf_counter()
        spans_of[method] = {
            doc_id: anonymizer.find_spans(by_id[doc_id]["original"], prediction, every, threshold)
            for doc_id, prediction in zip(ids, predictions, strict=True)
        }
        seconds[method] = model_seconds + time.perf_counter() - tick
    texts: dict[str, dict[str, str]] = {
        "clear": {i: by_id[i]["original"] for i in ids},
        "textwash": {i: by_id[i]["textwash"] for i in ids},
    }
    from anonymize.baseline_spacy import SpacyBaseline

    tick = time.perf_counter()
    spacy_results = SpacyBaseline().mask_many([by_id[i]["original"] for i in ids])
    texts["spacy"] = {i: r.text for i, r in zip(ids, spacy_results, strict=True)}
    seconds["spacy"] = time.perf_counter() - tick
    for method in ("model", "model+rules", *(f"model_t{t:g}" for t in MODEL_THRESHOLDS)):
        texts[method] = {i: render(by_id[i]["original"], spans_of[method][i]) for i in ids}
    tick = time.perf_counter()
    texts["all_content_words"] = {
        i: render(by_id[i]["original"], content_word_spans(by_id[i]["original"])) for i in ids
    }
    seconds["all_content_words"] = time.perf_counter() - tick

    predictions_by: dict[str, dict[str, list]] = {m: {a: [] for a in eval_attacks} for m in methods}
    guard_predictions: dict[str, dict[str, list]] = {
        f"guarded_k{k}{variant}": {} for k in guard_ks for variant in ("", "_neutral")
    }
    guard_rows: list[dict] = []
    attack_seconds: dict[str, float] = {a: 0.0 for a in eval_attacks}

    from anonymize.information import information_source
    from anonymize.tpi import TPIScorer, masked_ranges_from_texts

    tpi_scorer = TPIScorer(information_source(args.masked_lm))

    def summarize(ids: list[str], folds_run: list[int]) -> tuple[dict[str, Any], dict]:
        """Score the texts of the folds done so far; return (summary, methods' entries)."""
        summary_methods: dict[str, Any] = {}
        persons = len(set(target.values()))
        for method in methods:
            by_attack = predictions_by[method]
            hits = reidentified_by(by_attack)
            entry: dict[str, Any] = {
                "trir": {
                    **{a: round(trir(p).trir_pct, 2) for a, p in by_attack.items()},
                    STRONGEST: round(trir(strongest_adversary(by_attack)).trir_pct, 2),
                },
                "mean_true_rank": {a: trir(p).mean_true_rank for a, p in by_attack.items()},
                # Texts only this attack re-identifies: what it adds to the strongest.
                "only_this_attack_pct": {
                    a: round(100.0 * sum(h == [a] for h in hits.values()) / len(ids), 2)
                    for a in by_attack
                },
                "chance": chance_levels(by_attack, persons, args.seed),
            }
            masked = total = 0
            for i in ids:
                m, n = words_masked_share(by_id[i]["original"], texts[method][i])
                masked, total = masked + m, total + n
            entry["words_masked_pct"] = round(100.0 * masked / max(total, 1), 2)
            tick = time.perf_counter()
            corpus_tpi = tpi_scorer.corpus(
                (
                    i,
                    by_id[i]["original"],
                    masked_ranges_from_texts(by_id[i]["original"], texts[method][i]),
                )
                for i in ids
            )
            entry["tpi"] = round(100.0 * corpus_tpi.tpi, 2)
            entry["tpi_metric"] = corpus_tpi.metric
            entry["tpi_ic_source"] = corpus_tpi.ic_source
            entry["tpi_documents_without_information"] = corpus_tpi.undefined
            log(f"{method}: {corpus_tpi.metric} {entry['tpi']} ({time.perf_counter() - tick:.0f}s)")
            entry["strongest_null_pct"] = entry["chance"]["strongest_label_permutation_mean_pct"]
            entry["strongest_null_p95_pct"] = entry["chance"]["strongest_label_permutation_p95_pct"]
            if method in guard_predictions:
                own = guard_predictions[method]
                entry["trir_guard"] = {
                    **{a: round(trir(p).trir_pct, 2) for a, p in own.items()},
                    STRONGEST: round(trir(strongest_adversary(own)).trir_pct, 2),
                }
                # Held-out TRIR minus the guard's own strongest (its attacks on its half).
                entry["transfer_gap_pts"] = {
                    a: round(v - entry["trir_guard"][STRONGEST], 2)
                    for a, v in entry["trir"].items()
                }
                k = int(method.removeprefix("guarded_k").removesuffix("_neutral"))
                mine = [r for r in guard_rows if r["k"] == k]
                entry["flagged_pct"] = round(100.0 * sum(r["flagged"] for r in mine) / len(mine), 2)
                entry["guard_words_pct"] = round(
                    100.0 * sum(r["words_masked_by_guard"] for r in mine) / max(total, 1), 2
                )
            if method == "textwash":
                entry["seconds_note"] = "Textwash's published outputs: not re-run, no time"
            else:
                entry["seconds"] = round(seconds[method], 1)
            summary_methods[method] = entry

        for method, rivals in dominated_by(summary_methods).items():
            summary_methods[method]["dominated_by"] = rivals
        summary = {
            "data": str(data.name),
            "limit_per_person": args.limit_per_person,
            "texts": len(ids),
            "persons": persons,
            "chance_trir_pct": round(100.0 / persons, 2),
            "folds": args.folds,
            "folds_run": folds_run,
            "background": (
                "(b) k-fold over the study's own descriptions (attacks.background); each fold's "
                "background split per person into a guard half and an evaluation half"
            ),
            "guard_attacks": list(guard_attack_names),
            "eval_attacks": list(eval_attacks),
            "eval_attack_seconds": {a: round(t, 1) for a, t in attack_seconds.items()},
            # TRIA is fine-tuned once per fold on the evaluation half with a trimmed schedule
            # (as the human-vs-machine benchmark): the deviations from the reference are these.
            "tria_deviations": TRIA_BENCHMARK_CONFIG if "tria" in eval_attacks else None,
            "dense_precision": "bf16 autocast" if _bf16() else "fp32",
            # False: placeholders curate to tokens of their own ("_PRONOUN"); before this key
            # existed they were curated like words ("pronoun"), as the reference does.
            "placeholders_as_words": config.placeholders_as_words,
            "guard": {
                "ks": list(guard_ks),
                "budget": args.budget,
                "phrases": True,
                "stop_words": not args.no_stop_words,
                "rare_zipf": rare_zipf,
                "resamples": args.resamples,
                "evidence_z": args.evidence_z or None,
            },
            "rules": list(RULE_ORDER),
            "model_thresholds": list(MODEL_THRESHOLDS),
            "robust_trir_pct": ROBUST_TRIR_PCT,
            "tpi_masking": (
                "original words the method does not keep unchanged (difflib word alignment)"
            ),
            "machine_shared": (
                "2 cores shared by 9 sessions: seconds are inflated, compare within run"
            ),
            "methods": summary_methods,
            "targets": issue23_targets(summary_methods, guard_ks),
            "seconds_total": round(time.perf_counter() - started, 1),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        }
        return summary, summary_methods

    for fold in folds:
        guard_background, eval_background = fold_halves(fold, by_id, args.seed)
        log(f"fold {fold.index}: {len(fold.test_ids)} texts; fitting guard attacks")
        with neural_precision() if "dense" in guard_attack_names else contextlib.nullcontext():
            guard_attacks = fit_attacks(
                guard_background,
                guard_attack_names,
                config,
                resamples=args.resamples,
                seed=args.seed + fold.index,
            )
        items = [
            GuardItem(i, by_id[i]["original"], target[i], list(spans_of["model+rules"][i]))
            for i in fold.test_ids
        ]
        tick = time.perf_counter()
        guard_config = GuardConfig(
            k=max(guard_ks),
            budget=args.budget,
            checkpoints=guard_ks,
            stop_words=not args.no_stop_words,
            rare_zipf=rare_zipf,
            evidence_z=args.evidence_z or None,
        )
        evidence = PersonEvidence.fit(guard_background) if args.evidence_z else None
        with neural_precision() if "dense" in guard_attack_names else contextlib.nullcontext():
            results = guard_texts(
                items,
                guard_attacks,
                guard_config,
                progress=lambda done, total: done % 50 == 0 and log(f"  guarded {done}/{total}"),
                verify=False,
                evidence=evidence,
            )
        guard_seconds = time.perf_counter() - tick
        for k in guard_ks:
            method = f"guarded_k{k}"
            texts.setdefault(method, {})
            texts.setdefault(f"{method}_neutral", {})
            for result in results:
                text, spans, words, flagged = result.at_k(k)
                texts[method][result.doc_id] = text
                texts[f"{method}_neutral"][result.doc_id] = neutral_render(
                    result.document.text, spans
                )
                guard_rows.append(
                    {
                        "id": result.doc_id,
                        "k": k,
                        "words_masked_by_guard": words,
                        "flagged": flagged,
                        "rank_before": result.ranks_before,
                    }
                )
            # at_k replays one run; the run's time is charged to each k in full (upper bound).
            seconds[method] += guard_seconds + seconds["model+rules"] * len(items) / len(ids)
            seconds[f"{method}_neutral"] = seconds[method]
            for variant in (method, f"{method}_neutral"):
                fold_texts = {i: texts[variant][i] for i in fold.test_ids}
                for name, attack in guard_attacks.items():
                    guard_predictions[variant].setdefault(name, [])
                    guard_predictions[variant][name] += attack.predict(
                        fold_texts, top_k=1, true_names=target
                    )
        log(f"fold {fold.index}: guard done in {guard_seconds:.0f}s; fitting held-out attacks")
        # Methods often agree on a text (a guard that had nothing to do leaves model+rules as
        # it was): each distinct text is attacked once and its prediction shared.
        unique: dict[str, str] = {}
        key_of: dict[tuple[str, str], str] = {}
        for method in methods:
            for i in fold.test_ids:
                key = f"{i}\x00{texts[method][i]}"
                unique.setdefault(key, texts[method][i])
                key_of[(method, i)] = key
        truth = {key: target[key.split("\x00", 1)[0]] for key in unique}
        for name in eval_attacks:
            tick = time.perf_counter()
            # One attack at a time, fitted on the evaluation half only, then freed (TRIA).
            with neural_precision() if name == "dense" else contextlib.nullcontext():
                attack = fit_attacks(eval_background, [name], config)[name]
                shared = {p.doc_id: p for p in attack.predict(unique, top_k=1, true_names=truth)}
            del attack
            attack_seconds[name] += time.perf_counter() - tick
            log(f"fold {fold.index}: {name} fitted and predicted {len(unique)} texts")
            for method in methods:
                for i in fold.test_ids:
                    prediction = copy.copy(shared[key_of[(method, i)]])
                    prediction.doc_id = i
                    predictions_by[method][name].append(prediction)
        log(f"fold {fold.index}: held-out attacks done")
        if fold is not folds[-1]:
            # A long run leaves what it has measured: the folds done so far, scored alone.
            done = folds[: folds.index(fold) + 1]
            partial, _ = summarize([i for f in done for i in f.test_ids], [f.index for f in done])
            partial["partial"] = "only the folds in folds_run: the run went on after this"
            (out / "summary_partial.json").write_text(
                json.dumps(partial, indent=1) + "\n", encoding="utf-8"
            )
            log(f"fold {fold.index}: wrote {out / 'summary_partial.json'}")

    # 3. Scores.
    frequencies = None
    if not args.no_construct_loss:
        from intruder.analysis.construct_loss import load_pos_pipeline, pos_frequencies

        frequencies = pos_frequencies([by_id[i]["original"] for i in ids], load_pos_pipeline())
    from did_work import require_work

    require_work("guarded_anonymization", texts=len(ids), folds=len(folds), methods=len(methods))
    summary, summary_methods = summarize(ids, [f.index for f in folds])
    # Written before the construct-loss stage, so a failure there keeps the attack results.
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if frequencies is not None:
        for method in methods:
            log(f"construct loss: {method}")
            summary_methods[method]["construct_loss"] = construct_loss_summary(
                [by_id[i]["original"] for i in ids], [texts[method][i] for i in ids], frequencies
            )
        summary["seconds_total"] = round(time.perf_counter() - started, 1)
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    with (out / "texts.jsonl").open("w", encoding="utf-8") as sink:
        for i in ids:
            sink.write(json.dumps({"id": i, **{m: texts[m][i] for m in methods}}) + "\n")
    plot(summary_methods, summary["chance_trir_pct"], out / "frontier.png")
    (out / "frontier.md").write_text(frontier_markdown(summary_methods), encoding="utf-8")
    log(f"wrote {out / 'summary.json'}")
    for method, entry in summary_methods.items():
        guard = entry.get("trir_guard", {}).get(STRONGEST)
        print(
            f"{method:<24} TRIR {entry['trir']}  words masked {entry['words_masked_pct']}%"
            f"  {entry['tpi_metric']} {entry['tpi']}"
            + (f"  guard's own strongest {guard}%" if guard is not None else "")
        )
    return 0


def dominated_by(methods: dict[str, Any]) -> dict[str, list[str]]:
    """Return per method the methods with both a lower held-out strongest TRIR and a higher TPI."""
    return {
        method: [
            other
            for other, rival in methods.items()
            if rival["trir"][STRONGEST] < entry["trir"][STRONGEST] and rival["tpi"] > entry["tpi"]
        ]
        for method, entry in methods.items()
    }


# Issue 23's targets for the guard at k = 5 (held-out attackers), stated here to be checked,
# never tuned: strongest <= 25 % at <= 40 % of words masked, each attack <= 15 %, and a
# transfer gap (held-out minus the guard's own strongest) <= 15 points per attack.
TARGET_K = 5
TARGET_STRONGEST_PCT = 25.0
TARGET_WORDS_MASKED_PCT = 40.0
TARGET_EACH_ATTACK_PCT = 15.0
TARGET_GAP_PTS = 15.0


def issue23_targets(methods: dict[str, Any], ks: tuple[int, ...]) -> dict[str, Any]:
    """Return each target of issue 23 with the measured value and whether it is met.

    "The guard dominates": at every k, no method other than the guard's own rows has both a
    lower held-out strongest TRIR and a higher TPI.
    """
    checks: dict[str, Any] = {}
    guard = methods.get(f"guarded_k{TARGET_K}")
    if guard is not None:
        attacks = {a: v for a, v in guard["trir"].items() if a != STRONGEST}
        gaps = {a: v for a, v in guard["transfer_gap_pts"].items() if a != STRONGEST}
        checks[f"k{TARGET_K}_strongest_le_{TARGET_STRONGEST_PCT:g}"] = {
            "value": guard["trir"][STRONGEST],
            "met": guard["trir"][STRONGEST] <= TARGET_STRONGEST_PCT,
        }
        checks[f"k{TARGET_K}_words_masked_le_{TARGET_WORDS_MASKED_PCT:g}"] = {
            "value": guard["words_masked_pct"],
            "met": guard["words_masked_pct"] <= TARGET_WORDS_MASKED_PCT,
        }
        checks[f"k{TARGET_K}_each_attack_le_{TARGET_EACH_ATTACK_PCT:g}"] = {
            "value": attacks,
            "met": all(v <= TARGET_EACH_ATTACK_PCT for v in attacks.values()),
        }
        checks[f"k{TARGET_K}_transfer_gap_le_{TARGET_GAP_PTS:g}"] = {
            "value": gaps,
            "met": all(v <= TARGET_GAP_PTS for v in gaps.values()),
        }
    dominates = {}
    for k in ks:
        for method in (f"guarded_k{k}", f"guarded_k{k}_neutral"):
            if method in methods:
                rivals = [m for m in methods[method]["dominated_by"] if "guarded" not in m]
                dominates[method] = {"met": not rivals, "dominated_by": rivals}
    checks["guard_dominates"] = {
        "value": dominates,
        "met": all(entry["met"] for entry in dominates.values()),
    }
    return checks


def frontier_markdown(methods: dict[str, Any]) -> str:
    """Return the frontier as a Markdown table (TRIR per attack, strongest, null, TPI, masked)."""
    attacks = [a for a in next(iter(methods.values()))["trir"] if a != STRONGEST]
    metric = next(iter(methods.values()))["tpi_metric"]
    head = [
        "method",
        *attacks,
        "**strongest**",
        "strongest null (mean / p95)",
        metric,
        "words masked",
        "guard's own strongest",
        "transfer gap (pts, per attack)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for method, entry in methods.items():
        gap = entry.get("transfer_gap_pts")
        cells = [
            method,
            *(f"{entry['trir'][a]:.1f}" for a in attacks),
            f"**{entry['trir'][STRONGEST]:.1f}**",
            f"{entry['strongest_null_pct']:.1f} / {entry['strongest_null_p95_pct']:.1f}",
            f"{entry['tpi']:.1f}",
            f"{entry['words_masked_pct']:.1f} %",
            f"{entry['trir_guard'][STRONGEST]:.1f}" if "trir_guard" in entry else "",
            " / ".join(f"{gap[a]:+.1f}" for a in attacks) if gap else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(methods: dict[str, Any], chance: float, path: Path) -> None:
    """Draw the frontier: held-out strongest TRIR against TPI and against words masked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = next(iter(methods.values()))["tpi_metric"]
    figure, panels = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for axes, key, label in (
        (panels[0], "tpi", f"{metric} (% of the originals' information kept)"),
        (panels[1], "words_masked_pct", "words masked (%)"),
    ):
        for method, entry in methods.items():
            x, y = entry[key], entry["trir"][STRONGEST]
            color = "tab:red" if "guarded" in method else "tab:blue"
            axes.scatter([x], [y], s=36, color=color)
            axes.annotate(method, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7)
            if "trir_guard" in entry:
                axes.scatter([x], [entry["trir_guard"][STRONGEST]], marker="x", color="tab:gray")
        axes.axhline(
            chance, color="gray", linestyle="--", linewidth=1, label=f"chance, one ({chance:g}%)"
        )
        null = max(e["strongest_null_pct"] for e in methods.values())
        axes.axhline(
            null,
            color="gray",
            linestyle=":",
            linewidth=1,
            label=f"permutation null, strongest ({null:g}%)",
        )
        axes.axhline(
            ROBUST_TRIR_PCT,
            color="tab:green",
            linewidth=1,
            label=f"paper 002's robust level ({ROBUST_TRIR_PCT:g}%, one attacker)",
        )
        if key == "words_masked_pct":
            # Issue 23's k = 5 target: at most 25 % strongest with at most 40 % masked.
            axes.fill_between(
                [0, TARGET_WORDS_MASKED_PCT],
                0,
                TARGET_STRONGEST_PCT,
                color="tab:green",
                alpha=0.08,
                label="issue 23's k = 5 target region",
            )
        axes.set_xlabel(label)
        axes.legend(loc="upper left" if key == "tpi" else "upper right", fontsize=7)
    panels[0].set_ylabel("TRIR, strongest held-out attacker (%)")
    figure.suptitle("Textwash study 2: privacy-utility frontier (x = guard's own TRIR)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


if __name__ == "__main__":
    sys.exit(main())

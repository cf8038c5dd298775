"""Where does the guarded texts' residual re-identification come from? (diagnosis of a run)

Usage::

    python benchmarks/guard_residuals.py --run DIR [--method guarded_k5] [--out FILE.json]

DIR is a `benchmarks/guarded_anonymization.py --out DIR` folder (its texts.jsonl). The folds
and the guard / evaluation halves are rebuilt exactly as the benchmark built them (same seed),
the held-out lexical attackers (TF-IDF, BM25) are refitted on the evaluation half, and for
the chosen method it reports:

- which attacks re-identify which texts, and how much of the strongest TRIR is one attack
  alone;
- what the strongest-of-m attackers scores by chance: m independent random rankings
  (1 - (1 - 1/n)^m), and a label-permutation null that keeps the attackers' real agreement
  (each text's true person replaced by a random one, the attackers' predictions kept);
- for every text TF-IDF re-identifies, which surviving terms carry the true person's lead
  over the runner-up (each term's share of the cosine difference, exact for TF-IDF), sorted
  into: placeholders, stop words the curation keeps (capitalised "She", "His"), terms the
  guard's background never contained, and terms it did contain.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from attacks import AttackConfig, trir  # noqa: E402
from attacks.background import BackgroundRecord, cross_validation_folds  # noqa: E402
from attacks.curation import PLACEHOLDER_MARK  # noqa: E402
from attacks.strongest import strongest_adversary  # noqa: E402
from benchmarks.guarded_anonymization import (  # noqa: E402
    fold_halves,
    load_study,
)
from guard import fit_attacks  # noqa: E402
from research_data import textwash_study_dir  # noqa: E402
from research_data.json_lines import read_json_lines  # noqa: E402

# How placeholders were curated before `attacks.curation.PLACEHOLDER_MARK` (runs made then).
OLD_PLACEHOLDER_PIECE = ("PERSON", "LOCATION", "NUMERIC", "DATE", "OTHERIDENTIFYING", "PRONOUN")


def is_placeholder_term(word: str, marked: bool) -> bool:
    """Return whether a curated word is a placeholder (`marked`: the run curated them apart)."""
    if marked:
        return word.startswith(PLACEHOLDER_MARK)
    return word.upper().startswith(OLD_PLACEHOLDER_PIECE) or "REIDENTIFYING" in word.upper()


def term_class(
    term: str, guard_vocabulary: set[str], stop_words: set[str], marked: bool = True
) -> str:
    """Return the class of one curated TF-IDF term (a unigram or a bigram)."""
    words = term.split()
    if any(is_placeholder_term(w, marked) for w in words):
        return "placeholder"
    if all(w.lower() in stop_words for w in words):
        return "stop word kept by curation (capitalised)"
    if any(w.lower() in stop_words for w in words):
        return "bigram with a kept stop word"
    if term not in guard_vocabulary:
        return "absent from the guard's background"
    return "present in the guard's background"


def dense_collapse(folds, by_id, produced, target, config, seed) -> dict:
    """Return how far dense retrieval collapses onto one person on these texts, and its TRIR
    once each person's mean log-probability over the attacked texts is removed.

    Texts full of placeholders embed near one "hub" profile; an attacker who sees all the
    texts can centre the scores per person (as hubness corrections do) and rank again.
    """
    import numpy as np

    from benchmarks.guarded_anonymization import neural_precision

    raw = centred = total = 0
    collapse = []
    for fold in folds:
        _, eval_background = fold_halves(fold, by_id, seed)
        with neural_precision():
            attack = fit_attacks(eval_background, ["dense"], config)["dense"]
            ids = list(fold.test_ids)
            names = attack.names
            predictions = attack.predict(
                {i: produced[i] for i in ids}, top_k=len(names), true_names=target
            )
        probs = np.array([[dict(p.top_k)[n] for n in names] for p in predictions])
        log_p = np.log(np.maximum(probs, 1e-300))
        truth = np.array([names.index(target[i]) for i in ids])
        raw += int((log_p.argmax(axis=1) == truth).sum())
        centred_log_p = log_p - log_p.mean(axis=0, keepdims=True)
        centred += int((centred_log_p.argmax(axis=1) == truth).sum())
        total += len(ids)
        [(column, count)] = Counter(log_p.argmax(axis=1).tolist()).most_common(1)
        share = round(100 * count / len(ids), 1)
        collapse.append({"fold": fold.index, "person": names[column], "share_pct": share})
    return {
        "trir": round(100 * raw / total, 2),
        "trir_hub_centred": round(100 * centred / total, 2),
        "most_predicted_person": collapse,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True, type=Path)
    parser.add_argument("--method", default="guarded_k5")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--permutations", type=int, default=200)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--only-folds", default=None, help="comma list of fold indexes")
    parser.add_argument(
        "--dense", action="store_true", help="also measure dense retrieval's collapse (slow)"
    )
    args = parser.parse_args()
    run_summary = json.loads((args.run / "summary.json").read_text(encoding="utf-8"))
    # The same rows the run attacked (a smoke run keeps a few texts per person).
    rows = load_study(textwash_study_dir() / "study2.jsonl", run_summary.get("limit_per_person"))
    by_id = {r["id"]: r for r in rows}
    target = {r["id"]: r["person"] for r in rows}
    produced = {}
    for _, row in read_json_lines(args.run / "texts.jsonl"):
        produced[row["id"]] = row[args.method]
    # Folds over the whole study, as the benchmark made them; a subset run (--only-folds)
    # produced texts for some folds only.
    records = [BackgroundRecord(i, target[i], None, by_id[i]["original"]) for i in by_id]
    folds = [
        fold
        for fold in cross_validation_folds(records, folds=args.folds, seed=args.seed)
        if all(i in produced for i in fold.test_ids)
        and (not args.only_folds or str(fold.index) in args.only_folds.split(","))
    ]
    ids = [i for fold in folds for i in fold.test_ids]
    from did_work import require_work

    # A run made with --limit-per-person has no complete fold of the full data to analyse.
    require_work("guard_residuals", complete_folds=len(folds), texts=len(ids))
    # Runs made before the placeholder rule curated placeholders like words: analyse them so.
    as_words = run_summary.get("placeholders_as_words", True)
    config = AttackConfig(
        cache_dir=str(args.run / "cache"), seed=args.seed, placeholders_as_words=as_words
    )
    from attacks.curation import load_spacy

    stop_words = set(load_spacy().Defaults.stop_words)
    predictions: dict[str, list] = {"tfidf": [], "bm25": []}
    classes: Counter[str] = Counter()
    class_texts: Counter[str] = Counter()
    top_terms: Counter[str] = Counter()
    for fold in folds:
        guard_background, eval_background = fold_halves(fold, by_id, args.seed)
        guard_tfidf = fit_attacks(guard_background, ["tfidf"], config)["tfidf"]
        guard_vocabulary = set(guard_tfidf.fitted.vectorizer.vocabulary_)
        attacks = fit_attacks(eval_background, ["tfidf", "bm25"], config)
        texts = {i: produced[i] for i in fold.test_ids}
        for name, attack in attacks.items():
            predictions[name] += attack.predict(texts, top_k=2, true_names=target)
        prepared_tfidf = attacks["tfidf"]
        tfidf = prepared_tfidf.fitted
        terms = tfidf.vectorizer.get_feature_names_out()
        hits = [p for p in predictions["tfidf"][-len(texts) :] if p.correct]
        curated = prepared_tfidf.prepared.documents([texts[p.doc_id] for p in hits], curate=True)
        vectors = tfidf.vectorizer.transform(curated)
        for row, prediction in enumerate(hits):
            true_column = tfidf.names.index(prediction.true_name)
            runner_up = tfidf.names.index(prediction.top_k[1][0])
            document = vectors[row]
            lead = document.multiply(tfidf.matrix[true_column] - tfidf.matrix[runner_up]).tocoo()
            positive = [(int(j), float(v)) for j, v in zip(lead.col, lead.data, strict=True)]
            positive = [(j, v) for j, v in positive if v > 0]
            total = sum(v for _, v in positive) or 1.0
            seen_classes = set()
            for j, value in positive:
                kind = term_class(str(terms[j]), guard_vocabulary, stop_words, not as_words)
                classes[kind] += value / total
                seen_classes.add(kind)
            for kind in seen_classes:
                class_texts[kind] += 1
            if positive:
                best = max(positive, key=lambda pair: pair[1])
                top_terms[str(terms[best[0]])] += 1
    n = len(ids)
    hits_by = {name: {p.doc_id for p in preds if p.correct} for name, preds in predictions.items()}
    union = set().union(*hits_by.values())
    persons = len(set(target.values()))
    rng = random.Random(args.seed)
    person_list = sorted(set(target.values()))
    top_of = {
        name: {p.doc_id: p.predicted_name for p in preds} for name, preds in predictions.items()
    }
    null = []
    for _ in range(args.permutations):
        fake = {i: rng.choice(person_list) for i in ids}
        null.append(sum(any(top_of[a][i] == fake[i] for a in top_of) for i in ids) / n * 100)
    tfidf_hits = len(hits_by["tfidf"]) or 1
    report = {
        "run": str(args.run),
        "method": args.method,
        "placeholders_as_words": as_words,
        "texts": n,
        "trir": {name: round(trir(preds).trir_pct, 2) for name, preds in predictions.items()},
        "trir_strongest_lexical": round(trir(strongest_adversary(predictions)).trir_pct, 2),
        "only_tfidf_pct": round(100 * len(hits_by["tfidf"] - hits_by["bm25"]) / n, 2),
        "only_bm25_pct": round(100 * len(hits_by["bm25"] - hits_by["tfidf"]) / n, 2),
        "both_pct": round(100 * len(hits_by["tfidf"] & hits_by["bm25"]) / n, 2),
        "union_pct": round(100 * len(union) / n, 2),
        "chance": {
            "one_attack_pct": round(100 / persons, 2),
            "strongest_of_m_independent_pct": {
                m: round(100 * (1 - (1 - 1 / persons) ** m), 2) for m in (2, 3, 4)
            },
            "strongest_lexical_label_permutation_pct": {
                "mean": round(sum(null) / len(null), 2),
                "p95": round(sorted(null)[int(0.95 * len(null))], 2),
            },
        },
        "tfidf_lead_share_by_term_class_pct": {
            k: round(100 * v / tfidf_hits, 1) for k, v in classes.most_common()
        },
        "tfidf_hits_with_term_class_pct": {
            k: round(100 * v / tfidf_hits, 1) for k, v in class_texts.most_common()
        },
        "tfidf_top_lead_terms": top_terms.most_common(40),
    }
    if args.dense:
        report["dense"] = dense_collapse(folds, by_id, produced, target, config, args.seed)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

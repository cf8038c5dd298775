"""Score word-level PSI tagging against Textwash's labels, like Table 1 of the paper.

Every word of a kept document with a recovered label is scored once: its predicted category
(from the spans the anonymizer would replace) against the category Textwash gave it. We also
score the binary decision PSI vs NONE, and how often the described person's first or last
name survives anonymization.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from anonymize.alignment import AlignedDocument, name_word_categories
from anonymize.corpus import SPLIT_SEED, default_corpus_dir, load_aligned_corpus, split_by_person
from anonymize.labels import (
    CATEGORIES,
    NONE,
    TEXTWASH_CATEGORIES,
    Word,
    category_of,
    validate_categories,
)
from anonymize.model import DEFAULT_MODEL_DIR, Anonymizer
from anonymize.placeholders import Span
from anonymize.rules import DEFAULT_RULES, RULE_ORDER

LEAK_THRESHOLDS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def word_categories_from_spans(words: Sequence[Word], spans: Sequence[Span]) -> list[str]:
    """Return each word's category: that of the span covering it, else NONE."""
    categories = [NONE] * len(words)
    ordered = sorted(spans, key=lambda span: span.start)
    cursor = 0
    for position, word in enumerate(words):
        while cursor < len(ordered) and ordered[cursor].end <= word.start:
            cursor += 1
        if cursor < len(ordered) and ordered[cursor].start < word.end:
            categories[position] = ordered[cursor].category
    return categories


def _prf(tp: int, fp: int, fn: int) -> dict[str, float]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def score_word_categories(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, object]:
    """Return per-category P/R/F1/support, macro/weighted averages and binary PSI scores."""
    per_category: dict[str, dict] = {}
    for category in (*CATEGORIES, NONE):
        tp = sum(g == category and p == category for g, p in zip(gold, predicted, strict=True))
        fp = sum(g != category and p == category for g, p in zip(gold, predicted, strict=True))
        fn = sum(g == category and p != category for g, p in zip(gold, predicted, strict=True))
        per_category[category] = {**_prf(tp, fp, fn), "support": tp + fn}

    def averages(names: Sequence[str]) -> dict[str, dict[str, float]]:
        present = [n for n in names if per_category[n]["support"] > 0]
        total = sum(per_category[n]["support"] for n in present) or 1
        result = {}
        for kind in ("macro", "weighted"):
            weights = {
                n: (1 / len(present) if kind == "macro" else per_category[n]["support"] / total)
                for n in present
            }
            result[kind] = {
                metric: sum(weights[n] * per_category[n][metric] for n in present)
                for metric in ("precision", "recall", "f1")
            }
        return result

    binary_tp = sum(g != NONE and p != NONE for g, p in zip(gold, predicted, strict=True))
    binary_fp = sum(g == NONE and p != NONE for g, p in zip(gold, predicted, strict=True))
    binary_fn = sum(g != NONE and p == NONE for g, p in zip(gold, predicted, strict=True))
    return {
        "words": len(gold),
        "accuracy": sum(g == p for g, p in zip(gold, predicted, strict=True)) / max(len(gold), 1),
        "per_category": per_category,
        "psi_categories": averages(CATEGORIES),
        "textwash_categories": averages(TEXTWASH_CATEGORIES),
        "all_with_none": averages((*CATEGORIES, NONE)),
        "binary_psi": {**_prf(binary_tp, binary_fp, binary_fn), "support": binary_tp + binary_fn},
    }


def name_leaks(document: AlignedDocument, predicted: Sequence[str]) -> bool:
    """Return True when a word of the described person's name is left unreplaced."""
    names = name_word_categories(document.person, document.words)
    return any(predicted[position] == NONE for position in names)


def evaluate_predictions(
    documents: Sequence[AlignedDocument], predicted: Sequence[Sequence[str]]
) -> dict[str, object]:
    """Score predicted word categories of `documents` against their recovered labels."""
    gold_flat, predicted_flat = [], []
    leaked = 0
    mentioning = 0
    for document, categories in zip(documents, predicted, strict=True):
        for label, category in zip(document.labels, categories, strict=True):
            if label is not None:  # words alignment could not attribute are not scored
                gold_flat.append(category_of(label))
                predicted_flat.append(category)
        leaked += name_leaks(document, categories)
        mentioning += bool(name_word_categories(document.person, document.words))
    metrics = score_word_categories(gold_flat, predicted_flat)
    metrics["documents"] = len(documents)
    metrics["name_leak"] = {
        "documents_leaking": leaked,
        "documents_mentioning_name": mentioning,
        "rate": leaked / max(len(documents), 1),
        "rate_among_mentioning": leaked / max(mentioning, 1),
        "textwash_documents_leaking": sum(d.relabelled_names > 0 for d in documents),
    }
    return metrics


def predict_with_anonymizer(
    anonymizer, documents: Sequence[AlignedDocument], thresholds: Sequence[float]
) -> dict[float, list[list[str]]]:
    """Return word categories per threshold, running the model once for all thresholds."""
    predictions = anonymizer.predict_words([d.text for d in documents])
    selected = validate_categories(None)
    result: dict[float, list[list[str]]] = {}
    for threshold in thresholds:
        result[threshold] = [
            word_categories_from_spans(
                d.words, anonymizer.find_spans(d.text, p, selected, threshold)
            )
            for d, p in zip(documents, predictions, strict=True)
        ]
    return result


def evaluate_documents(
    anonymizer, documents: Sequence[AlignedDocument], sweep: Sequence[float] = LEAK_THRESHOLDS
) -> dict[str, object]:
    """Score the anonymizer at its threshold and sweep thresholds for the masking trade-off."""
    thresholds = sorted({anonymizer.threshold, *sweep})
    by_threshold = predict_with_anonymizer(anonymizer, documents, thresholds)
    metrics = evaluate_predictions(documents, by_threshold[anonymizer.threshold])
    metrics["threshold"] = anonymizer.threshold
    metrics["precision"] = anonymizer.precision
    metrics["model_version"] = anonymizer.model_version
    metrics["threshold_sweep"] = []
    for threshold in thresholds:
        scored = evaluate_predictions(documents, by_threshold[threshold])
        metrics["threshold_sweep"].append(
            {
                "threshold": threshold,
                "weighted_f1_psi": scored["psi_categories"]["weighted"]["f1"],
                "binary_psi_f1": scored["binary_psi"]["f1"],
                "binary_psi_recall": scored["binary_psi"]["recall"],
                "name_leak_rate": scored["name_leak"]["rate"],
            }
        )
    return metrics


CALIBRATION_THRESHOLDS: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(2, 19))


# Differences in F1 smaller than this are noise on a dev split of a few hundred documents.
CALIBRATION_TOLERANCE = 0.005


def choose_threshold(
    anonymizer,
    documents: Sequence[AlignedDocument],
    candidates: Sequence[float] = (),
    tolerance: float = CALIBRATION_TOLERANCE,
) -> dict[str, object]:
    """Return the threshold chosen on `documents` (the dev split), privacy first.

    Only thresholds with the fewest documents leaking the described person's name qualify;
    among them, the lowest (strictest) threshold whose weighted F1 (PSI) + binary PSI F1 is
    within `tolerance` of the best wins. Every candidate's scores are returned for the record.
    """
    thresholds = sorted(candidates or CALIBRATION_THRESHOLDS)
    by_threshold = predict_with_anonymizer(anonymizer, documents, thresholds)
    rows = []
    for threshold in thresholds:
        scored = evaluate_predictions(documents, by_threshold[threshold])
        rows.append(
            {
                "threshold": threshold,
                "weighted_f1_psi": round(scored["psi_categories"]["weighted"]["f1"], 4),
                "binary_psi_f1": round(scored["binary_psi"]["f1"], 4),
                "name_leak_rate": scored["name_leak"]["rate"],
            }
        )
    fewest_leaks = min(row["name_leak_rate"] for row in rows)
    allowed = [row for row in rows if row["name_leak_rate"] == fewest_leaks]
    best = max(row["weighted_f1_psi"] + row["binary_psi_f1"] for row in allowed)
    chosen = next(
        row for row in allowed if row["weighted_f1_psi"] + row["binary_psi_f1"] >= best - tolerance
    )
    return {
        "threshold": chosen["threshold"],
        "criterion": (
            "fewest name leaks on dev, then the lowest threshold within "
            f"{tolerance} of the best weighted F1 (PSI) + binary PSI F1"
        ),
        "documents": len(documents),
        "candidates": rows,
    }


def calibrate_model(
    model_dir: str | Path | None, corpus_dir: str | Path | None, split: str = "dev"
) -> dict[str, object]:
    """Choose the model's threshold on `split` and save it in its config and manifest."""
    model_path = Path(model_dir) if model_dir else DEFAULT_MODEL_DIR
    documents = documents_of_split(
        model_path, Path(corpus_dir) if corpus_dir else default_corpus_dir(), split
    )
    chosen = choose_threshold(Anonymizer.load(model_path), documents)
    chosen["split"] = split
    config_path = model_path / "config.json"
    config = json.loads(config_path.read_text())
    config["psi_threshold"] = chosen["threshold"]  # read back by Anonymizer.load
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    manifest_path = model_path / "training_manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        manifest["threshold_selection"] = chosen
        manifest_path.write_text(json.dumps(manifest, indent=1))
    return chosen


def write_metrics(metrics: dict, path: Path) -> None:
    """Write metrics as indented JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(metrics, indent=1, sort_keys=False) + "\n")


def format_table(systems: dict[str, dict], emit: Callable[[str], None] = print) -> None:
    """Print a Table-1-style report with one P/R/F1 block per system and the support."""
    names = list(systems)
    header = f"{'category':<28}" + "".join(f"{n[:24]:>26}" for n in names) + f"{'support':>9}"
    emit(header)
    emit(f"{'':<28}" + "".join(f"{'P':>8}{'R':>9}{'F1':>9}" for _ in names))
    first = systems[names[0]]

    def row(label: str, values: list[dict], support: int | str) -> str:
        cells = "".join(f"{v['precision']:>8.2f}{v['recall']:>9.2f}{v['f1']:>9.2f}" for v in values)
        return f"{label:<28}{cells}{support:>9}"

    for category in (*CATEGORIES, NONE):
        support = first["per_category"][category]["support"]
        emit(row(category, [systems[n]["per_category"][category] for n in names], support))
    total = first["words"]
    for group, title in (
        ("psi_categories", "PSI"),
        ("textwash_categories", "Textwash-11"),
        ("all_with_none", "all+NONE"),
    ):
        for kind in ("macro", "weighted"):
            emit(row(f"{kind} avg ({title})", [systems[n][group][kind] for n in names], total))
    emit(
        row(
            "binary PSI vs NONE",
            [systems[n]["binary_psi"] for n in names],
            first["binary_psi"]["support"],
        )
    )
    emit(f"{'accuracy':<28}" + "".join(f"{systems[n]['accuracy']:>26.3f}" for n in names))
    emit(
        f"{'name leak (docs)':<28}"
        + "".join(
            f"{systems[n]['name_leak']['documents_leaking']:>6}/{first['documents']:<4}"
            f"{systems[n]['name_leak']['rate']:>15.1%}"
            for n in names
        )
    )


def documents_of_split(model_dir: Path, corpus_dir: Path, split: str) -> list[AlignedDocument]:
    """Return the aligned documents of `split`, as recorded by the model's training run.

    Reusing the recorded document ids guarantees the test persons are the ones the model
    never saw; without a manifest the split is redone with the default seed.
    """
    documents, _ = load_aligned_corpus(corpus_dir)
    manifest_path = model_dir / "training_manifest.json"
    if manifest_path.exists():
        ids = set(json.loads(manifest_path.read_text())["split_ids"][split])
        return [d for d in documents if d.id in ids]
    return split_by_person(documents, seed=SPLIT_SEED)[split]


def run_evaluation(
    model_dir: str | Path | None,
    corpus_dir: str | Path | None,
    split: str,
    threshold: float | None,
    with_baseline: bool,
    output: str | Path | None,
    save_metrics: bool = False,
    precision: str = "auto",
    rules: str | Sequence[str] | None = "default",
    rules_ablation: bool = False,
    emit: Callable[[str], None] = print,
) -> dict[str, dict]:
    """Score the model (and the spaCy baseline) on one split, print the table, save JSON."""
    model_path = Path(model_dir) if model_dir else DEFAULT_MODEL_DIR
    documents = documents_of_split(
        model_path, Path(corpus_dir) if corpus_dir else default_corpus_dir(), split
    )
    anonymizer = Anonymizer.load(model_path, precision=precision, rules=rules)
    if threshold is not None:
        anonymizer.threshold = threshold
    model_metrics = evaluate_documents(anonymizer, documents)
    if save_metrics:
        write_metrics(model_metrics, model_path / f"metrics_{split}.json")
    systems = {f"model ({anonymizer.model_version})": model_metrics}
    if with_baseline:
        from anonymize.baseline_spacy import SPACY_MODEL, SpacyBaseline

        predicted = SpacyBaseline().predict_word_categories(
            [d.text for d in documents], [d.words for d in documents]
        )
        systems[f"spaCy {SPACY_MODEL}"] = evaluate_predictions(documents, predicted)
    emit(
        f"split={split} documents={len(documents)} persons="
        f"{len({d.person for d in documents})} threshold={anonymizer.threshold} "
        f"precision={anonymizer.precision} rules={','.join(anonymizer.rules) or 'none'}"
    )
    format_table(systems, emit)
    report: dict[str, object] = {"split": split, "systems": systems}
    if rules_ablation:
        report["rules_ablation"] = rules_ablation_rows(anonymizer, documents)
        format_ablation(report["rules_ablation"], emit)
    if output:
        write_metrics(report, Path(output))
    return systems


def rules_ablation_rows(anonymizer, documents: Sequence[AlignedDocument]) -> list[dict]:
    """Score the model with no rules, each rule alone, the default and all rules (one pass).

    Besides agreement with Textwash's labels, each row counts the words the rules add and the
    gold-PSI words left unmasked, the privacy side that agreement alone hides.
    """
    predictions = anonymizer.predict_words([d.text for d in documents])
    selected = validate_categories(None)
    saved = anonymizer.rules
    configurations = {
        "none": (),
        **{name: (name,) for name in RULE_ORDER},
        "default": DEFAULT_RULES,
        "all": RULE_ORDER,
    }
    rows = []
    try:
        for label, rules in configurations.items():
            anonymizer.rules = rules
            predicted = [
                word_categories_from_spans(
                    d.words, anonymizer.find_spans(d.text, p, selected, anonymizer.threshold)
                )
                for d, p in zip(documents, predictions, strict=True)
            ]
            scored = evaluate_predictions(documents, predicted)
            gold_psi_missed = masked = 0
            for document, categories in zip(documents, predicted, strict=True):
                for gold, category in zip(document.labels, categories, strict=True):
                    masked += category != NONE
                    gold_psi_missed += (
                        gold is not None and category_of(gold) != NONE and category == NONE
                    )
            rows.append(
                {
                    "rules": label,
                    "weighted_f1_psi": round(scored["psi_categories"]["weighted"]["f1"], 4),
                    "binary_psi_f1": round(scored["binary_psi"]["f1"], 4),
                    "binary_psi_precision": round(scored["binary_psi"]["precision"], 4),
                    "binary_psi_recall": round(scored["binary_psi"]["recall"], 4),
                    "name_leak_documents": scored["name_leak"]["documents_leaking"],
                    "words_masked": masked,
                    "gold_psi_words_unmasked": gold_psi_missed,
                }
            )
    finally:
        anonymizer.rules = saved
    return rows


def format_ablation(rows: Sequence[dict], emit: Callable[[str], None] = print) -> None:
    """Print the rules ablation, one line per configuration."""
    emit(
        f"{'rules':<18}{'weighted F1':>12}{'binary F1':>10}{'bin P':>8}{'bin R':>8}"
        f"{'leaks':>6}{'masked':>8}{'PSI missed':>11}"
    )
    for row in rows:
        emit(
            f"{row['rules']:<18}{row['weighted_f1_psi']:>12.4f}{row['binary_psi_f1']:>10.4f}"
            f"{row['binary_psi_precision']:>8.4f}{row['binary_psi_recall']:>8.4f}"
            f"{row['name_leak_documents']:>6}{row['words_masked']:>8}"
            f"{row['gold_psi_words_unmasked']:>11}"
        )

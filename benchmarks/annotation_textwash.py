"""Textwash's own outputs as an annotator: TAB metrics for the anonymizer and spaCy, and
agreement between Textwash and the model as two annotators.

- Textwash's placeholders are read back onto the study descriptions by the alignment the
  anonymizer's training uses (`anonymize/alignment.py`): consecutive words with one recovered
  category form a mention; mentions of one category with the same words form an entity (as
  Textwash numbers one value with one index); names are DIRECT, everything else QUASI.
  Unaligned words carry no annotation, and documents alignment drops are left out.
- Only the documents of the model's held-out test persons are scored (the training manifest
  records them), so the model is not scored on texts it learnt from.
- The anonymizer is scored at its own threshold and a sweep; spaCy with the baseline's mapping.
- Agreement: the model's spans as a second annotator (entities by placeholder).

    python benchmarks/annotation_textwash.py --out benchmarks/results/annotation_textwash.json

With $TAB_EVALUATION_PY (TAB's evaluation.py) set, TAB's own script recomputes the anonymizer's
numbers on the written gold and system files (in a temporary folder; the texts are never
written into the repository) and the JSON says whether they agree.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from anonymize.alignment import AlignedDocument
from anonymize.annotations.agreement import project_agreement
from anonymize.annotations.formats import system_output_to_json, write_tab
from anonymize.annotations.schema import AnnotatedDocument, Mention, default_identifier_type
from anonymize.annotations.systems import spacy_spans
from anonymize.annotations.tab_metrics import SystemSpan, TabScorer
from anonymize.corpus import default_corpus_dir
from anonymize.evaluate import documents_of_split
from anonymize.labels import validate_categories
from anonymize.model import DEFAULT_MODEL_DIR, Anonymizer

HEADLINE = (
    "recall_direct_entities",
    "recall_quasi_entities",
    "token_recall",
    "mention_recall",
    "token_precision",
    "weighted_token_precision",
    "mention_precision",
    "token_f1",
)
SWEEP = (0.2, 0.3, 0.5, 0.7)


def textwash_mentions(document: AlignedDocument) -> list[Mention]:
    """Return Textwash's annotation of one aligned document as TAB mentions."""
    mentions, current = [], None
    for word, label in zip(document.words, document.labels, strict=True):
        category = label.split("-", 1)[1] if label and "-" in label else None
        continues = current and category == current[2] and label.startswith("I-")
        if continues:
            current[1] = word.end
            continue
        if current:
            mentions.append(current)
        current = [word.start, word.end, category] if category else None
    if current:
        mentions.append(current)
    entities: dict[tuple[str, str], str] = {}
    result = []
    for start, end, category in mentions:
        key = (category, document.text[start:end].casefold())
        entity = entities.setdefault(key, f"{document.id}_textwash_e{len(entities) + 1}")
        result.append(Mention(start, end, category, entity, default_identifier_type(category)))
    return result


def model_layer(doc_id: str, spans: list) -> list[Mention]:
    """Return the model's spans as an annotator's mentions (entities by placeholder)."""
    return [
        Mention(
            s.start,
            s.end,
            s.category,
            f"{doc_id}_model_{s.placeholder or s.start}",
            default_identifier_type(s.category),
        )
        for s in spans
    ]


def headline(metrics: dict) -> dict:
    return {key: round(metrics[key], 4) for key in HEADLINE} | {
        "per_category": {
            c: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}
            for c, row in metrics["per_category"].items()
        }
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=DEFAULT_MODEL_DIR)
    parser.add_argument("--corpus-dir", type=Path, default=default_corpus_dir())
    parser.add_argument("--split", default="test", choices=("train", "dev", "test"))
    parser.add_argument("--limit", type=int, default=0, help="first N documents (smoke run)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    started = time.perf_counter()
    aligned = documents_of_split(args.model_dir, args.corpus_dir, args.split)
    if args.limit:
        aligned = aligned[: args.limit]
    gold = [
        AnnotatedDocument(d.id, d.text, {"textwash": textwash_mentions(d)}, dataset_type=args.split)
        for d in aligned
    ]
    texts = [d.text for d in gold]
    scorer = TabScorer(gold)

    anonymizer = Anonymizer.load(args.model_dir)
    predictions = anonymizer.predict_words(texts)
    everything = validate_categories(None)
    systems: dict[str, dict] = {}
    model_spans_at_default = None
    for threshold in sorted({anonymizer.threshold, *SWEEP}):
        spans = [
            anonymizer.find_spans(text, p, everything, threshold)
            for text, p in zip(texts, predictions, strict=True)
        ]
        if threshold == anonymizer.threshold:
            model_spans_at_default = spans
        system = {
            d.doc_id: [SystemSpan(s.start, s.end, s.category) for s in doc_spans]
            for d, doc_spans in zip(gold, spans, strict=True)
        }
        systems[f"model@{threshold}"] = headline(scorer.evaluate(system))
    spacy = spacy_spans(texts)
    spacy_system = {d.doc_id: s for d, s in zip(gold, spacy, strict=True)}
    systems["spacy"] = headline(scorer.evaluate(spacy_system))

    two_annotators = [
        AnnotatedDocument(
            d.doc_id,
            d.text,
            {"textwash": d.annotations["textwash"], "model": model_layer(d.doc_id, spans)},
        )
        for d, spans in zip(gold, model_spans_at_default, strict=True)
    ]
    agreement = project_agreement(two_annotators)

    crosscheck = None
    if os.environ.get("TAB_EVALUATION_PY"):
        from benchmarks.tab_crosscheck import compare

        with tempfile.TemporaryDirectory() as tmp:
            gold_path, system_path = Path(tmp) / "gold.json", Path(tmp) / "system.json"
            write_tab(gold, gold_path)
            pairs = {
                d.doc_id: [(s.start, s.end) for s in spans]
                for d, spans in zip(gold, model_spans_at_default, strict=True)
            }
            system_path.write_text(json.dumps(system_output_to_json(pairs)))
            crosscheck = compare(Path(os.environ["TAB_EVALUATION_PY"]), gold_path, system_path)

    from did_work import require_work

    require_work(
        "annotation_textwash",
        documents=len(gold),
        textwash_mentions=sum(len(d.annotations["textwash"]) for d in gold),
    )
    result = {
        "benchmark": "annotation_textwash",
        "split": args.split,
        "documents": len(gold),
        "textwash_mentions": sum(len(d.annotations["textwash"]) for d in gold),
        "model_version": anonymizer.model_version,
        "model_threshold": anonymizer.threshold,
        "weighting": "wordfreq_surprisal (unigram -ln p(word)); uniform precision beside it",
        "systems": systems,
        "agreement_textwash_vs_model": {
            dimension: {
                unit: {
                    match: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in m.items()}
                    for match, m in matches.items()
                }
                for unit, matches in units.items()
            }
            for dimension, units in agreement["pairs"][0]["measures"].items()
            if dimension != "confidential_status"  # Textwash has no confidential attribute
        },
        "tab_crosscheck": crosscheck,
        "runtime_s": round(time.perf_counter() - started, 1),
        "machine": f"{platform.machine()} {os.cpu_count()} cpus",
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

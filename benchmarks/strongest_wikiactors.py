"""Every attack and the strongest adversary on WikiActors, with a TF-IDF spot check.

A document counts as re-identified by the strongest adversary when any attack ranks the true
actor first (attacks/strongest.py). Writes one JSON with TRIR per attack and column for each
data file, the wall time per attack, and, for a few manually anonymized abstracts that TF-IDF
re-identifies, the terms that carried the match.

Usage (heavy with TRIA: run under the shared lock)::

    python benchmarks/strongest_wikiactors.py --attacks tfidf,bm25,dense \\
        --out benchmarks/results/strongest_wikiactors.json
    flock /tmp/heavy.lock python benchmarks/strongest_wikiactors.py --attacks all --out ...
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from tria_wikiactors import (  # noqa: E402
    MINILM_DEVIATIONS,
    REFERENCE_CONFIG,
    LogProgress,
    machine_info,
    read_reference,
)

from attacks import AttackConfig, load_dataset  # noqa: E402
from attacks.runner import attack_names, run_attacks, write_outputs  # noqa: E402
from research_data import missing_reason, tria_wikiactors_dir  # noqa: E402

DATA_FILES = ("WikiActors_50_eval.json", "WikiActors_50_eval_25pctBK.json")
SPOT_COLUMN = "manual_abstract"


def tfidf_spot_check(run, dataset, count: int, top: int) -> list[dict[str, Any]]:
    """Return, for ``count`` documents TF-IDF re-identifies, the terms that carried it."""
    documents = dataset.document_sets.get(SPOT_COLUMN)
    if documents is None:
        return []
    hits = [p for p in run.predictions[SPOT_COLUMN] if p.correct][:count]
    return [
        {
            "doc_id": p.doc_id,
            "true_name": p.true_name,
            "true_prob": p.true_prob,
            "runner_up": p.top_k[1] if len(p.top_k) > 1 else None,
            "terms": run.attack.shared_terms(documents.texts[p.doc_id], p.true_name, top),
        }
        for p in hits
    ]


def main() -> None:
    """Run the attacks on each data file and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--attacks", default="tfidf,bm25,dense", help="comma list or 'all'")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--data-dir", type=Path, default=tria_wikiactors_dir())
    parser.add_argument("--cache-dir", default=str(REPO / "runs" / "cache" / "attacks"))
    parser.add_argument("--run-dir", type=Path, default=REPO / "runs" / "strongest")
    parser.add_argument("--spot-check", type=int, default=3, help="TF-IDF hits to explain")
    args = parser.parse_args()
    names = attack_names(args.attacks)
    values = {**REFERENCE_CONFIG, "cache_dir": args.cache_dir}
    values.update({key: deviation["value"] for key, deviation in MINILM_DEVIATIONS.items()})
    report: dict[str, Any] = {"attacks": names, "machine_before": machine_info(), "datasets": {}}
    for file_name in DATA_FILES:
        path = args.data_dir / file_name
        if not path.is_file():
            sys.exit(missing_reason(path))
        config = AttackConfig.from_dict({**values, "data_file_path": str(path)})
        dataset = load_dataset(None, config)
        run_dir = args.run_dir / path.stem
        start = time.perf_counter()
        result = run_attacks(
            dataset,
            config,
            names,
            LogProgress(),
            on_run=lambda name, run, d=run_dir: write_outputs(run, d / name),
        )
        entry: dict[str, Any] = {
            "trir_by_attack": result.final["trir_by_attack"],
            "reference_tria": read_reference(path),
            "wall_seconds": {**result.final["wall_seconds"], "total": time.perf_counter() - start},
        }
        if "tfidf" in result.runs:
            entry["tfidf_spot_check"] = tfidf_spot_check(
                result.runs["tfidf"], dataset, args.spot_check, top=8
            )
        report["datasets"][path.stem] = entry
        print(json.dumps({path.stem: entry["trir_by_attack"]}, indent=1), flush=True)
    from did_work import require_work

    require_work("strongest_wikiactors", datasets=len(report["datasets"]))
    report["machine_after"] = machine_info()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()

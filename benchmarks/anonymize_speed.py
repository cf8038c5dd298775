"""Speed of the anonymizer: today's setting against the default, interleaved, with test F1.

Run on the 2-core machine (nice it where the machine is shared):

    nice -n 5 python benchmarks/anonymize_speed.py \
        --output benchmarks/results/anonymize_speed_issue25.json

Two systems anonymize the same subset of the Textwash study descriptions through
`Anonymizer.anonymize_many`: the setting of issue 25's start ("bf16": bf16 autocast, windows
length-sorted within groups of 64 texts) and the default (`Anonymizer.load()`, "auto": int8
encoder Linears where torch has an x86 int8 engine, length groups of 256 texts). Passes
alternate within each round (order rotated), so a busy shared machine slows both alike and
the ratio holds; each pass records wall seconds, the process's CPU seconds and the load
average. Quality: the test split's weighted and binary PSI F1 (`anonymize.evaluate`, the model
card's numbers) of both, and the dev split's as a second look; the criterion is |delta| <=
0.003 on the test split (issue 25, target 4: 90 descriptions/s on 2 cores).
`--roberta` adds the older comparison with a roberta-base-sized tagger.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from research_data import textwash_study_dir  # noqa: E402
from research_data.json_lines import read_json_lines  # noqa: E402


def load_descriptions(corpus_dir: Path) -> list[str]:
    """Return the original texts of study1 and study2, in file order."""
    texts = []
    for name in ("study1.jsonl", "study2.jsonl"):
        texts += [row["original"] for _, row in read_json_lines(corpus_dir / name)]
    return texts


def roberta_base_sized(tokenizer):
    """Return a randomly initialised token classifier with roberta-base's shape."""
    from transformers import RobertaConfig, RobertaForTokenClassification

    from anonymize.labels import ID2LABEL, LABEL2ID

    config = RobertaConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=514,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=len(ID2LABEL),
        id2label=ID2LABEL,
        label2id=LABEL2ID,
    )
    return RobertaForTokenClassification(config).eval()


def time_system(anonymizer, texts: list[str], batch_size: int, n_tokens: int) -> dict:
    """Anonymize `texts` once after a short warm-up and return throughput figures."""
    anonymizer.anonymize_many(texts[:8], batch_size=batch_size)
    started = time.perf_counter()
    anonymizer.anonymize_many(texts, batch_size=batch_size)
    seconds = time.perf_counter() - started
    return {
        "descriptions": len(texts),
        "subword_tokens": n_tokens,
        "seconds": round(seconds, 3),
        "descriptions_per_s": round(len(texts) / seconds, 2),
        "tokens_per_s": round(n_tokens / seconds, 1),
        "parameters": sum(p.numel() for p in anonymizer.model.parameters()),
    }


TODAY_GROUP = 64  # texts whose windows were length-sorted together at issue 25's start
F1_TOLERANCE = 0.003
TARGET_PER_S = 90


def anonymize_as_today(anonymizer, texts: list[str], batch_size: int) -> None:
    """Run `texts` as `anonymize_many` grouped them at issue 25's start (64 texts a group)."""
    for start in range(0, len(texts), TODAY_GROUP):
        anonymizer.anonymize_many(texts[start : start + TODAY_GROUP], batch_size=batch_size)


def interleaved_rounds(systems: dict, texts: list[str], rounds: int) -> dict[str, list[dict]]:
    """Time one pass of every system per round, the order rotated, and return the passes."""
    names = list(systems)
    passes: dict[str, list[dict]] = {name: [] for name in names}
    for round_ in range(rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            wall, cpu = time.perf_counter(), time.process_time()
            systems[name](texts)
            passes[name].append(
                {
                    "wall_s": round(time.perf_counter() - wall, 3),
                    "cpu_s": round(time.process_time() - cpu, 3),
                    "load_average_1m": round(os.getloadavg()[0], 2),
                }
            )
    return passes


def summarise(passes: list[dict], n: int) -> dict:
    """Return the rates of one system's passes (median and best wall, CPU per description)."""
    walls = [p["wall_s"] for p in passes]
    cpus = [p["cpu_s"] for p in passes]
    return {
        "passes": passes,
        "descriptions_per_s_median": round(n / statistics.median(walls), 2),
        "descriptions_per_s_best": round(n / min(walls), 2),
        "cpu_ms_per_description_median": round(1000 * statistics.median(cpus) / n, 2),
    }


def quality(anonymizer, documents: list) -> dict[str, float]:
    """Return a split's weighted and binary PSI F1 and name leaks at the model's threshold."""
    from anonymize.evaluate import evaluate_documents

    metrics = evaluate_documents(anonymizer, documents, sweep=())
    return {
        "weighted_f1_psi": round(metrics["psi_categories"]["weighted"]["f1"], 4),
        "binary_psi_f1": round(metrics["binary_psi"]["f1"], 4),
        "binary_psi_recall": round(metrics["binary_psi"]["recall"], 4),
        "name_leak_documents": metrics["name_leak"]["documents_leaking"],
        "documents": metrics["documents"],
    }


def compare_quality(reference: dict, candidate: dict) -> dict:
    """Return the candidate's F1 deltas against the reference and whether they are in bounds."""
    deltas = {
        "delta_weighted_f1": round(candidate["weighted_f1_psi"] - reference["weighted_f1_psi"], 4),
        "delta_binary_f1": round(candidate["binary_psi_f1"] - reference["binary_psi_f1"], 4),
    }
    deltas["within_tolerance"] = all(abs(v) <= F1_TOLERANCE for v in deltas.values())
    return deltas


def roberta_comparison(shipped, texts: list[str], batch_size: int) -> dict:
    """Time the shipped model against a roberta-base-sized tagger with the same settings."""
    from anonymize.encoding import encode_text
    from anonymize.model import Anonymizer

    tokens = sum(len(encode_text(shipped.tokenizer, t).input_ids) for t in texts)
    roberta = Anonymizer(
        roberta_base_sized(shipped.tokenizer),
        shipped.tokenizer,
        "roberta-base-sized-random",
        precision=shipped.precision,
    )
    minilm = time_system(shipped, texts, batch_size, tokens)
    other = time_system(roberta, texts, batch_size, tokens)
    return {
        "textwash-minilm": minilm,
        "roberta-base-sized": other,
        "speedup": round(minilm["descriptions_per_s"] / other["descriptions_per_s"], 2),
    }


def main() -> None:
    """Time today's setting and the default interleaved, score both, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus-dir", type=Path, default=textwash_study_dir())
    parser.add_argument("--subset", type=int, default=600, help="descriptions per timed pass")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-quality", action="store_true", help="speed only")
    parser.add_argument("--roberta", action="store_true", help="add the roberta-sized tagger")
    parser.add_argument("--machine-note", default="", help="e.g. how shared the machine was")
    parser.add_argument(
        "--output", type=Path, default=REPO / "benchmarks/results/anonymize_speed_issue25.json"
    )
    args = parser.parse_args()

    import torch

    from anonymize.evaluate import documents_of_split
    from anonymize.model import DEFAULT_MODEL_DIR, Anonymizer

    load_before = os.getloadavg()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    texts = load_descriptions(args.corpus_dir)
    subset = texts[:: max(1, len(texts) // args.subset)][: args.subset]
    today = Anonymizer.load(precision="bf16")
    default = Anonymizer.load()
    batch = args.batch_size
    systems = {
        "today (bf16, groups of 64)": lambda items: anonymize_as_today(today, items, batch),
        f"default ({default.precision})": lambda items: default.anonymize_many(
            items, batch_size=batch
        ),
    }
    for run in systems.values():  # warm-up
        run(subset[:32])
    passes = interleaved_rounds(systems, subset, args.rounds)
    speed = {name: summarise(values, len(subset)) for name, values in passes.items()}
    (today_name, today_speed), (default_name, default_speed) = speed.items()
    ratio = statistics.median(
        t["wall_s"] / d["wall_s"]
        for t, d in zip(today_speed["passes"], default_speed["passes"], strict=True)
    )
    from did_work import require_work

    require_work(
        "anonymize_speed",
        descriptions=len(subset),
        timed_passes=sum(len(v) for v in passes.values()),
    )
    result: dict = {
        "benchmark": "anonymize_speed",
        "command": "python benchmarks/anonymize_speed.py " + " ".join(sys.argv[1:]),
        "model_version": default.model_version,
        "settings": {
            "subset": len(subset),
            "rounds": args.rounds,
            "batch_size": batch,
            "threads": torch.get_num_threads(),
            "window_tokens": 256,
            "stride": 192,
        },
        "speed": speed,
        "ratio_default_to_today": {
            "median_of_round_ratios": round(ratio, 3),
            "cpu_per_description": round(
                today_speed["cpu_ms_per_description_median"]
                / default_speed["cpu_ms_per_description_median"],
                3,
            ),
        },
        "target": {
            "descriptions_per_s": TARGET_PER_S,
            "met_median": default_speed["descriptions_per_s_median"] >= TARGET_PER_S,
        },
    }
    if not args.no_quality:
        scores: dict = {}
        for split in ("test", "dev"):
            documents = documents_of_split(DEFAULT_MODEL_DIR, args.corpus_dir, split)
            reference = quality(today, documents)
            candidate = quality(default, documents)
            scores[split] = {
                today_name: reference,
                default_name: {**candidate, **compare_quality(reference, candidate)},
            }
        result["quality"] = scores
        result["quality_criterion"] = (
            f"test split: |delta weighted F1| and |delta binary F1| <= {F1_TOLERANCE}"
        )
    if args.roberta:
        result["roberta_base_sized"] = roberta_comparison(default, subset[:300], batch)
    result["machine"] = {
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        # Wall times on a shared machine are upper bounds; the ratio and CPU times hold better.
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        "note": args.machine_note,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

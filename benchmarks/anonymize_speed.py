"""Speed of the anonymizer on the study corpus vs a roberta-base-sized tagger, same pipeline.

Run under the heavy-job lock on the 2-core machine:

    flock /tmp/heavy.lock python benchmarks/anonymize_speed.py

Both systems go through `Anonymizer.anonymize_many` with the same tokenizer, windows, batch
size and thread count; only the network differs. The roberta-base-sized model has random
weights (its speed does not depend on them) and runs on a subset to keep the run short; the
shipped model is timed on the same subset and on the whole corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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


def main() -> None:
    """Time both systems and write the JSON result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus-dir", type=Path, default=textwash_study_dir())
    parser.add_argument("--subset", type=int, default=300, help="descriptions for the comparison")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--precision",
        default="auto",
        help="precision of both systems (auto = bf16 autocast where the CPU has native bf16)",
    )
    parser.add_argument(
        "--previous-model",
        type=Path,
        default=None,
        help="another saved model (e.g. the previously shipped one) timed on the same subset",
    )
    parser.add_argument(
        "--output", type=Path, default=REPO / "benchmarks/results/anonymize_speed.json"
    )
    args = parser.parse_args()

    import torch

    from anonymize.encoding import encode_text
    from anonymize.model import Anonymizer

    load_before = round(os.getloadavg()[0], 2)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    texts = load_descriptions(args.corpus_dir)
    subset = texts[:: max(1, len(texts) // args.subset)][: args.subset]
    shipped = Anonymizer.load(precision=args.precision)
    tokens = {id(t): len(encode_text(shipped.tokenizer, t).input_ids) for t in texts}
    count = lambda items: sum(tokens[id(t)] for t in items)  # noqa: E731
    roberta = Anonymizer(
        roberta_base_sized(shipped.tokenizer),
        shipped.tokenizer,
        "roberta-base-sized-random",
        precision=shipped.precision,
    )

    subset_minilm = time_system(shipped, subset, args.batch_size, count(subset))
    subset_roberta = time_system(roberta, subset, args.batch_size, count(subset))
    same_subset = {"textwash-minilm": subset_minilm, "roberta-base-sized": subset_roberta}
    if shipped.precision != "fp32":
        # The precision lever: the same model and subset with fp32 matmuls.
        fp32 = Anonymizer.load(precision="fp32")
        same_subset["textwash-minilm (fp32)"] = time_system(
            fp32, subset, args.batch_size, count(subset)
        )
    if args.previous_model is not None:
        previous = Anonymizer.load(args.previous_model, precision=args.precision)
        same_subset[f"previous: {previous.model_version}"] = time_system(
            previous, subset, args.batch_size, count(subset)
        )
        # Time the shipped model again after it, so drift in machine load shows up.
        same_subset["textwash-minilm (again)"] = time_system(
            shipped, subset, args.batch_size, count(subset)
        )
    full_minilm = time_system(shipped, texts, args.batch_size, count(texts))
    result = {
        "benchmark": "anonymize_speed",
        "machine": {
            "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
            # The machine is shared; load before/after shows how contended the timing was.
            "load_average_1m_before": load_before,
            "load_average_1m_after": round(os.getloadavg()[0], 2),
        },
        "settings": {
            "batch_size": args.batch_size,
            "window_tokens": 256,
            "stride": 192,
            "precision": shipped.precision,
        },
        "model_version": shipped.model_version,
        "full_corpus": {"textwash-minilm": full_minilm},
        "same_subset": same_subset,
        "speedup_vs_roberta_base_sized": round(
            subset_minilm["descriptions_per_s"] / subset_roberta["descriptions_per_s"], 2
        ),
        "targets": {"descriptions_per_s": 30, "speedup": 4},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

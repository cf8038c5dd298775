"""CPU cost per chunk of the dense attack's encoder, and how far cheaper variants move it.

    nice -n 5 python benchmarks/dense_encoder_levers.py --texts 120 --output FILE

Encodes the chunks of ``--texts`` Textwash study-2 originals (the background) and their
Textwash-anonymized versions (the queries) with the encoder as the attack runs it (fp32),
under bf16 autocast, and int8 dynamic quantization of its Linear layers. For each variant:
process CPU seconds per chunk (less distorted than wall time on a shared machine), the
largest cosine distance of its vectors to fp32's, and how many queries' nearest background
text differs from fp32's (a changed top 1 is a changed TRIR).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from research_data import textwash_study_dir  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=120)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from attacks.dense import profile_chunks, word_chunks
    from model_runtime.base_model import default_base_model

    rows = [
        json.loads(line)
        for line in (textwash_study_dir() / "study2.jsonl").read_text().splitlines()[: args.texts]
    ]
    background = [c for r in rows for c in profile_chunks(r["original"])]
    owner = [i for i, r in enumerate(rows) for _ in profile_chunks(r["original"])]
    queries = [word_chunks(r["textwash"]) for r in rows]
    flat = [c for q in queries for c in q]
    encoder = SentenceTransformer(default_base_model(), device="cpu")

    def encode(model, texts):
        return model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)

    def nearest(bg, qs):
        found, cursor = [], 0
        for chunks in queries:
            query = qs[cursor : cursor + len(chunks)].mean(axis=0)
            cursor += len(chunks)
            found.append(owner[int(np.argmax(bg @ (query / np.linalg.norm(query))))])
        return np.asarray(found)

    variants = {}
    reference = None
    quantized = torch.ao.quantization.quantize_dynamic(
        SentenceTransformer(default_base_model(), device="cpu"), {torch.nn.Linear}, torch.qint8
    )
    for name, model, autocast in (
        ("fp32", encoder, False),
        ("bf16_autocast", encoder, True),
        ("int8_dynamic", quantized, False),
    ):
        encode(model, background[:8])  # warm-up
        start = time.process_time()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            bg, qs = encode(model, background), encode(model, flat)
        cpu = time.process_time() - start
        top1 = nearest(bg, qs)
        if reference is None:
            reference = (bg, qs, top1)
        variants[name] = {
            "cpu_seconds_per_chunk": cpu / (len(background) + len(flat)),
            "max_cosine_distance_to_fp32": float(
                max(1 - (bg * reference[0]).sum(1).min(), 1 - (qs * reference[1]).sum(1).min())
            ),
            "queries_whose_top1_differs_from_fp32": int((top1 != reference[2]).sum()),
        }
        print(name, variants[name], flush=True)
    from did_work import require_work

    require_work("dense_encoder_levers", texts=len(rows), chunks=len(background) + len(flat))
    result = {
        "benchmark": "dense_encoder_levers",
        "texts": len(rows),
        "chunks": len(background) + len(flat),
        "threads": torch.get_num_threads(),
        "load_average_1m": list(os.getloadavg()),
        "machine": "2 cores shared with other sessions: CPU seconds, not wall",
        "variants": variants,
    }
    if args.output:
        args.output.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

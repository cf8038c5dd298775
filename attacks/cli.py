"""Command line: ``python -m attacks run`` and ``python -m attacks predict``."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from attacks.config import AttackConfig, ConfigError
from attacks.data import DatasetError
from attacks.metrics import TRIR_KEY
from attacks.registry import ATTACKS, load_attack
from llm.errors import LLMUnavailable
from model_runtime.cli_progress import StageBars, progress_wanted, silence_library_bars
from model_runtime.guess_scoring import DEFAULT_RULE, IDENTIFICATION_RULES
from research_data.json_lines import read_json_lines

RUN_EXAMPLE = """example:
  python -m attacks run --config docs/examples/attack_config.json --attack tfidf,bm25 \\
      --out runs/ferry
  (writes OUT/<attack>/ and OUT/final.json; TRIR per anonymization column is printed)"""
GUESS_EXAMPLE = """example:
  LLM_BASE_URL=http://127.0.0.1:8080/v1 LLM_MODEL=my-model \\
      python -m attacks guess --input texts.jsonl --out guesses.jsonl --k 3
  (texts.jsonl rows: {"doc_id": "t1", "text": "...", "true_name": "...", "aliases": [...]})"""
BUDGET_EXAMPLE = """example:
  python -m attacks budget --config docs/examples/attack_config.json \\
      --descriptions docs/examples/crowd_descriptions.jsonl --attack tfidf,bm25 \\
      --budget 1,2,all --resamples 10 --out runs/crowd
  (rows: {"id", "target", "writer"?, "text", "attacked"?}: each row's "attacked" text, or its
  "text", is attacked with b other rows per candidate as background; writes OUT/summary.json
  and OUT/ranks.jsonl)"""
PREDICT_EXAMPLE = """example:
  python -m attacks predict --model runs/ferry/tfidf/model --input texts.jsonl \\
      --out predictions.jsonl --top-k 5
  (texts.jsonl rows: {"doc_id": "t1", "text": "...", "true_name": "..."?})"""


def read_documents(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Read JSONL rows {"doc_id", "text", optional "true_name"}."""
    texts, true_names, _ = read_guess_documents(path)
    return texts, true_names


def command_run(args: argparse.Namespace) -> int:
    """Fit an attack on the config's data file and write all outputs."""
    from attacks.runner import attack_names, run_from_config, run_many_from_config

    names = attack_names(args.attack)
    config = AttackConfig.from_json(args.config)
    if args.data:
        config.data_file_path = args.data
    out_dir = Path(args.out or config.output_folder_path)
    progress = StageBars() if progress_wanted(quiet=args.quiet) else None
    if len(names) == 1:
        result = run_from_config(config, names[0], out_dir, progress)
        for column, values in result.final["trir"].items():
            print(
                f"TRIR {column}: {values[TRIR_KEY]:.1f}% "
                f"(n={values['n']}, cap {values['cap']:.0f}%)"
            )
    else:
        many = run_many_from_config(config, names, out_dir, progress)
        print_trir_table(many.final["trir_by_attack"])
    print(f"outputs in {out_dir}")
    return 0


def print_trir_table(trir_by_attack: dict[str, dict[str, float]]) -> None:
    """Print TRIR (%) with one row per column and one column per attack."""
    attacks = list(trir_by_attack)
    columns = sorted({c for values in trir_by_attack.values() for c in values})
    width = max(len(c) for c in columns) if columns else 6
    print("TRIR %".ljust(width) + "".join(f"{a:>10}" for a in attacks))
    for column in columns:
        cells = "".join(f"{trir_by_attack[a].get(column, float('nan')):>10.1f}" for a in attacks)
        print(column.ljust(width) + cells)


def read_descriptions(path: Path) -> tuple[list, dict[str, str]]:
    """Read JSONL rows {"id", "target", "writer"?, "text", "attacked"?}: records and queries."""
    from attacks.background import BackgroundRecord

    records, queries = [], {}
    for line_number, row in read_json_lines(path):
        where = f"{path}:{line_number}"
        if not isinstance(row, dict) or not all(row.get(key) for key in ("id", "target", "text")):
            raise DatasetError(f"{where}: each row needs 'id', 'target' and 'text'")
        text_id = str(row["id"])
        if text_id in queries:
            raise DatasetError(f"{where}: duplicate id {text_id!r}")
        writer = row.get("writer")
        records.append(
            BackgroundRecord(
                text_id, str(row["target"]), None if writer is None else str(writer), row["text"]
            )
        )
        queries[text_id] = row.get("attacked") or row["text"]
    return records, queries


def command_budget(args: argparse.Namespace) -> int:
    """Attack every description with b other descriptions per candidate, over R resamples."""
    from attacks.budget import budget_label, budget_trir, parse_budget, run_budget
    from attacks.prepared import PreparedTexts
    from attacks.runner import attack_names

    try:
        budgets = [parse_budget(v) for v in args.budget.split(",") if v.strip()]
    except ValueError as error:
        raise DatasetError(str(error)) from None
    names = attack_names(args.attack)
    from attacks.registry import ATTACKS as registry

    refits = [name for name in names if not getattr(registry[name], "reusable", False)]
    if refits:
        raise ConfigError(f"the knowledge budget takes the retrieval attacks, not {refits}")
    config = AttackConfig.from_json(args.config) if args.config else AttackConfig()
    records, queries = read_descriptions(Path(args.descriptions))
    prepared = PreparedTexts(config)
    reuse: dict = {}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"resamples": args.resamples, "folds": args.folds, "seed": args.seed}
    summary["knowledge_budget"] = {}
    with (out / "ranks.jsonl").open("w", encoding="utf-8") as handle:
        for budget in budgets:
            rows = run_budget(
                prepared,
                names,
                records,
                queries,
                budget,
                resamples=args.resamples,
                folds=args.folds,
                seed=args.seed,
                reuse=reuse,
            )
            label = budget_label(budget)
            for row in rows:
                handle.write(json.dumps({"budget": label, **row}) + "\n")
            summary["knowledge_budget"][label] = budget_trir(rows)
            cells = ", ".join(
                f"{name} {values['trir']:.1f}%"
                for name, values in summary["knowledge_budget"][label].items()
            )
            print(f"b = {label}: TRIR {cells} (n={len(queries)}, {args.resamples} resamples)")
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    print(f"outputs in {out}")
    return 0


def command_predict(args: argparse.Namespace) -> int:
    """Score new documents with a saved attack, without retraining."""
    from attacks.metrics import trir

    attack = load_attack(args.model)
    texts, true_names = read_documents(Path(args.input))
    predictions = attack.predict(texts, args.top_k, true_names or None)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for p in predictions:
            handle.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
    if true_names:
        print(f"TRIR: {trir(predictions).trir_pct:.1f}% over {len(true_names)} labelled documents")
    print(f"{len(predictions)} predictions in {out}")
    return 0


def read_guess_documents(
    path: Path,
) -> tuple[dict[str, str], dict[str, str], dict[str, list[str]]]:
    """Read JSONL rows {"doc_id", "text", optional "true_name" and "aliases"}."""
    texts: dict[str, str] = {}
    true_names: dict[str, str] = {}
    aliases: dict[str, list[str]] = {}
    for line_number, row in read_json_lines(path):
        if not isinstance(row, dict) or "doc_id" not in row or "text" not in row:
            raise DatasetError(f"{path}:{line_number}: each row needs 'doc_id' and 'text'")
        doc_id = str(row["doc_id"])
        if doc_id in texts:
            raise DatasetError(f"{path}:{line_number}: duplicate doc_id {doc_id!r}")
        texts[doc_id] = row["text"]
        if row.get("true_name") is not None:
            true_names[doc_id] = row["true_name"]
        if row.get("aliases"):
            aliases[doc_id] = [str(a) for a in row["aliases"]]
    return texts, true_names, aliases


def command_guess(args: argparse.Namespace) -> int:
    """Ask an LLM who each text describes (open world) and score it like a human guess."""
    from attacks.llm import guess_identities
    from llm import LLMClient, LLMSettings

    texts, true_names, aliases = read_guess_documents(Path(args.input))
    settings = LLMSettings.from_env(model=args.llm_model)
    progress = StageBars() if progress_wanted(quiet=args.quiet) else None
    with LLMClient(settings) as client:
        guesses = guess_identities(
            client,
            texts,
            true_names,
            aliases,
            k=args.k,
            threshold=args.threshold,
            progress=(lambda done, total: progress("guess", done, total)) if progress else None,
            rule=args.rule,
        )
        usage = client.usage.to_dict()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sampling = settings.sampling()
    with out.open("w", encoding="utf-8") as handle:
        for guess in guesses:
            row = {**guess.to_dict(), "llm": sampling}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    scored = [g for g in guesses if g.true_name is not None and not g.error_reason]
    failed = [g for g in guesses if g.error_reason]
    if scored:
        hits = sum(g.identified for g in scored)
        print(
            f"identified (first guess, {args.rule} rule at {args.threshold}): {hits} of "
            f"{len(scored)} ({100 * hits / len(scored):.1f}%)"
        )
    if failed:
        print(f"{len(failed)} text(s) without a usable answer (see 'error_reason' in {out})")
    print(
        f"{len(guesses)} guesses in {out}; {usage['requests']} request(s) sent, "
        f"{usage['cache_hits']} from cache"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser."""
    parser = argparse.ArgumentParser(prog="python -m attacks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="fit an attack and compute TRIR per anonymization column",
        epilog=RUN_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--config", required=True, help="JSON config (reference keys)")
    run.add_argument(
        "--attack",
        default="tria",
        help=f"one of {sorted(ATTACKS)}, a comma list, or 'all' (every attack but llm, which "
        "sends the texts to LLM_BASE_URL); with several, each writes to OUT/<attack>/ and "
        "OUT/final.json adds the strongest adversary (trir_by_attack)",
    )
    run.add_argument("--out", help="output directory (default: output_folder_path)")
    run.add_argument("--data", help="override data_file_path")
    run.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no progress bars (they are off anyway when stderr is not a terminal)",
    )
    run.set_defaults(func=command_run)
    budget = sub.add_parser(
        "budget",
        help="crowd intruder: attack each description knowing each candidate through b "
        "other descriptions (drawn at random, never the text's own or its writer's)",
        epilog=BUDGET_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    budget.add_argument(
        "--descriptions",
        required=True,
        help='JSONL: {"id", "target", "writer"?, "text", "attacked"?}',
    )
    budget.add_argument("--config", help="JSON config (default: the library's defaults)")
    budget.add_argument("--attack", default="tfidf,bm25,dense", help="comma list of attacks")
    budget.add_argument(
        "--budget", default="1,2,4,8,all", help="descriptions known per candidate: counts or 'all'"
    )
    budget.add_argument("--resamples", type=int, default=10, help="random draws averaged (R)")
    budget.add_argument("--folds", type=int, default=5, help="folds per resample (k)")
    budget.add_argument("--seed", type=int, default=0, help="seed of the folds and the draws")
    budget.add_argument("--out", required=True, help="output directory")
    budget.add_argument(
        "--quiet", action="store_true", help="no progress bars (off anyway without a terminal)"
    )
    budget.set_defaults(func=command_budget)
    predict = sub.add_parser(
        "predict",
        help="score documents with a saved attack",
        epilog=PREDICT_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    predict.add_argument("--model", required=True, help="saved attack directory (DIR/model)")
    predict.add_argument("--input", required=True, help='JSONL: {"doc_id", "text", "true_name"?}')
    predict.add_argument("--out", required=True, help="predictions JSONL")
    predict.add_argument("--top-k", type=int, default=5, help="candidates kept per document")
    predict.add_argument(
        "--quiet", action="store_true", help="no progress bars (off anyway without a terminal)"
    )
    predict.set_defaults(func=command_predict)
    guess = sub.add_parser(
        "guess",
        help="open-world LLM intruder: ask who each text describes (LLM_BASE_URL, LLM_MODEL, "
        "LLM_API_KEY) and score the first name like a human guess",
        epilog=GUESS_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    guess.add_argument(
        "--input", required=True, help='JSONL: {"doc_id", "text", "true_name"?, "aliases"?}'
    )
    guess.add_argument("--out", required=True, help="guesses JSONL")
    guess.add_argument("--k", type=int, default=3, help="names asked for per text")
    guess.add_argument(
        "--threshold", type=float, default=0.75, help="character cosine that counts as identified"
    )
    guess.add_argument(
        "--rule",
        choices=sorted(IDENTIFICATION_RULES),
        default=DEFAULT_RULE,
        help="best_match: the true person must be the guess's best match among the input's "
        "persons (its true names); paper: the cosine alone (the Textwash paper)",
    )
    guess.add_argument("--llm-model", default=None, help="overrides LLM_MODEL")
    guess.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no progress bars (they are off anyway when stderr is not a terminal)",
    )
    guess.set_defaults(func=command_guess)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; bad input exits with status 2 and a one-line error."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    silence_library_bars(bars=progress_wanted(quiet=args.quiet))
    try:
        return args.func(args)
    except (ConfigError, DatasetError, FileNotFoundError, LLMUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

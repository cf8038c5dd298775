"""Command line: `python -m anonymize run|train|evaluate|calibrate|card|tpi`."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from anonymize.labels import CATEGORIES
from anonymize.model import ANONYMIZER_PRECISIONS, saved_threshold
from anonymize.placeholders import OPERATORS
from model_runtime.cli_progress import counting_bar, progress_wanted, silence_library_bars
from research_data.json_lines import json_lines

EXIT_BAD_INPUT = 2
EXIT_SOME_FAILED = 3

# One worked example per verb, shown at the end of its --help.
EXAMPLES = {
    "run": """examples:
  echo '{"id": "t1", "text": "Orla Brennick is a nurse in Dunmore."}' | python -m anonymize run
  python -m anonymize run --input texts.jsonl --output o.jsonl --entities PERSON_FIRSTNAME,LOCATION
  python -m anonymize run --input-dir texts/ --output-dir anonymized/ --operator category""",
    "train": """example:
  python -m anonymize train --output-dir runs/psi-tagger --epochs 3
  (reads the Textwash study corpus; writes the model, its config and metrics_<split>.json)""",
    "evaluate": """example:
  python -m anonymize evaluate --split test --output runs/evaluate-test.json""",
    "calibrate": """example:
  python -m anonymize calibrate --model-dir runs/psi-tagger""",
    "card": """example:
  python -m anonymize card --model-dir runs/psi-tagger
  (rewrites runs/psi-tagger/MODEL_CARD.md from its metrics files and prints its path)""",
    "tpi": """example:
  python -m anonymize run --input docs/examples/descriptions.jsonl --output runs/anonymized.jsonl
  python -m anonymize tpi --input runs/anonymized.jsonl --summary-only
  (prints JSON: the share of the originals' information content the anonymized texts keep)""",
}


class InputError(ValueError):
    """A problem with one input line or file, worded for the user."""


@dataclass
class InputRecord:
    """One parsed JSONL line, kept whole so its extra fields pass through."""

    line_number: int
    record: dict


def parse_jsonl(stream: BinaryIO) -> Iterator[InputRecord | InputError]:
    """Yield each line as a record, or as an InputError naming the line and the problem."""
    for parsed in json_lines(stream):
        line_number, record, error = parsed.number, parsed.value, parsed.error
        if error is not None and error.kind == "encoding":
            yield InputError(
                f"line {line_number}: not valid UTF-8 (byte 0x{error.byte:02x} "
                f"at column {error.column})"
            )
            continue
        if error is not None:
            where = f", col {error.column}" if error.column else ""
            yield InputError(f"line {line_number}: malformed JSON ({error.reason}{where})")
            continue
        if not isinstance(record, dict):
            yield InputError(f"line {line_number}: expected a JSON object with id and text")
            continue
        missing = [key for key in ("id", "text") if key not in record]
        if missing:
            yield InputError(f"line {line_number}: missing field {', '.join(map(repr, missing))}")
            continue
        if not isinstance(record["text"], str):
            yield InputError(f"line {line_number}: field 'text' must be a string")
            continue
        yield InputRecord(line_number, record)


def not_json_lines(data: bytes, name: str) -> InputError | None:
    """Return one error for input that is not JSON Lines at all (a CSV, a text file), rather
    than a "malformed JSON" line per row: no line of it starts like a JSON value."""
    lines = [line.strip().removeprefix(b"\xef\xbb\xbf") for line in data.splitlines()]
    lines = [line for line in lines if line]
    if not lines or any(line[:1] in (b"{", b"[", b'"') for line in lines[:5]):
        return None
    first = lines[0][:60].decode("utf-8", "replace")
    looks = "a CSV file" if b"," in lines[0] or name.lower().endswith(".csv") else "plain text"
    return InputError(
        f"{name} is not JSON Lines (one JSON object per line, "
        f'{{"id": ..., "text": ...}}); its first line, {first!r}, looks like {looks}. '
        "Convert it to JSON Lines, or give a folder of .txt files with --input-dir"
    )


def _entities(values: list[str] | None) -> list[str] | None:
    """Accept --entities A B and --entities A,B."""
    if not values:
        return None
    return [part for value in values for part in value.split(",") if part.strip()]


def _refuse(errors: list[InputError], stderr: TextIO) -> int:
    """Print every input problem and return the bad-input exit code."""
    for error in errors:
        print(f"error: {error}", file=stderr)
    print("nothing written; fix the input or pass --skip-errors", file=stderr)
    return EXIT_BAD_INPUT


def _report_skipped(errors: list[InputError], stderr: TextIO) -> None:
    if errors:
        print(f"skipped {len(errors)} input(s):", file=stderr)
        for error in errors:
            print(f"  {error}", file=stderr)


def command_run(args: argparse.Namespace, stdin: BinaryIO, stdout: TextIO, stderr: TextIO) -> int:
    """Anonymize a JSONL file/stream or a folder of .txt files."""
    from anonymize.labels import validate_categories
    from anonymize.model import Anonymizer
    from anonymize.rules import resolve_rules

    try:
        validate_categories(_entities(args.entities))
    except ValueError as error:
        print(f"error: --entities: {error}", file=stderr)
        return EXIT_BAD_INPUT
    if args.threshold is not None and not 0.0 <= args.threshold <= 1.0:
        print(f"error: --threshold must be in [0, 1], got {args.threshold}", file=stderr)
        return EXIT_BAD_INPUT
    try:
        resolve_rules(args.rules)
    except ValueError as error:
        print(f"error: --rules: {error}", file=stderr)
        return EXIT_BAD_INPUT
    if (args.input_dir is None) != (args.output_dir is None):
        print("error: --input-dir and --output-dir go together", file=stderr)
        return EXIT_BAD_INPUT
    records: list[dict] = []
    names: list[str] = []
    if args.input_dir is not None:
        if not Path(args.input_dir).is_dir():
            print(f"error: --input-dir: {args.input_dir}: no such folder", file=stderr)
            return EXIT_BAD_INPUT
        texts, names, errors = _read_text_folder(Path(args.input_dir))
        if errors and not args.skip_errors:
            return _refuse(errors, stderr)
    else:
        if args.input in (None, "-"):
            data, name = stdin.read(), "the input (stdin)"
        else:
            try:
                data, name = Path(args.input).read_bytes(), f"--input {args.input}"
            except OSError as error:
                print(f"error: --input: {args.input}: {error.strerror}", file=stderr)
                return EXIT_BAD_INPUT
        wrong_format = not_json_lines(data, name)
        if wrong_format is not None:
            print(f"error: {wrong_format}", file=stderr)
            return EXIT_BAD_INPUT
        parsed = list(parse_jsonl(io.BytesIO(data)))
        errors = [item for item in parsed if isinstance(item, InputError)]
        if errors and not args.skip_errors:
            return _refuse(errors, stderr)
        records = [item.record for item in parsed if isinstance(item, InputRecord)]
        texts = [record["text"] for record in records]
    if args.method == "llm":
        return _run_llm(
            args,
            texts,
            names if args.input_dir is not None else None,
            records,
            errors,
            stdout,
            stderr,
        )
    if args.model_dir is not None and not Path(args.model_dir).is_dir():
        print(f"error: --model-dir: {args.model_dir}: no such folder", file=stderr)
        return EXIT_BAD_INPUT
    anonymizer = Anonymizer.load(
        args.model_dir, threads=args.threads, precision=args.precision, rules=args.rules
    )
    results = anonymizer.anonymize_many(
        texts,
        progress=counting_bar(
            "anonymize", enabled=progress_wanted(quiet=args.quiet, stream=stderr), stream=stderr
        ),
        batch_size=args.batch_size,
        entities=_entities(args.entities),
        threshold=args.threshold,
        operator=args.operator,
    )
    if args.input_dir is not None:
        _write_folder(args.output_dir, zip(names, (r.text for r in results), strict=True))
        where = args.output_dir
    else:
        lines = [
            json.dumps({**record, **result.to_dict()}, ensure_ascii=False) + "\n"
            for record, result in zip(records, results, strict=True)
        ]
        _write_lines(lines, args.output, stdout)
        where = "stdout" if args.output in (None, "-") else args.output
    _report_skipped(errors, stderr)
    spans = sum(len(result.spans) for result in results)
    print(f"anonymized {len(results)} text(s), {spans} span(s) masked; wrote {where}", file=stderr)
    return 0


def _write_folder(output_dir: str, files: Iterable[tuple[str, str]]) -> None:
    """Write each (file name, text) into `output_dir`, creating the folder."""
    folder = Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files:
        (folder / name).write_text(text, encoding="utf-8")


def _write_lines(lines: list[str], output: str | None, stdout: TextIO) -> None:
    """Write JSON lines to the --output file, or to stdout where it is absent or "-"."""
    if output in (None, "-"):
        stdout.writelines(lines)
    else:
        with Path(output).open("w", encoding="utf-8") as sink:
            sink.writelines(lines)


def _run_llm(
    args: argparse.Namespace,
    texts: list[str],
    names: list[str] | None,
    records: list[dict],
    errors: list[InputError],
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Anonymize with an LLM prompt (paper 002); failed texts are reported, never passed on.

    Exit 0 when every text was anonymized, EXIT_SOME_FAILED when some were not (their lines
    carry "error"; running the same command again resumes, paying only for those), and
    EXIT_BAD_INPUT when the endpoint cannot be used (nothing was sent).
    """
    from anonymize.llm import LLMAnonymizer
    from llm import LLMClient, LLMSettings, LLMUnavailable

    try:
        settings = LLMSettings.from_env(
            base_url=args.llm_base_url,
            model=args.llm_model,
            temperature=args.llm_temperature,
            seed=args.llm_seed,
            concurrency=args.llm_concurrency,
            cache_dir=args.llm_cache_dir,
            json_mode=True if args.llm_json_mode else None,
        )
    except ValueError as error:
        print(f"error: {error}", file=stderr)
        return EXIT_BAD_INPUT
    with LLMClient(settings) as client:
        anonymizer = LLMAnonymizer(client, args.prompt, operator=args.operator)
        try:
            outcomes = anonymizer.anonymize_many(texts)
        except LLMUnavailable as error:
            print(f"error: {error}", file=stderr)
            return EXIT_BAD_INPUT
        usage = client.usage.to_dict()
    method = anonymizer.method
    if names is not None:
        done = zip(names, outcomes, strict=True)
        _write_folder(args.output_dir, ((name, o.text or "") for name, o in done if o.ok))
    else:
        lines = [
            json.dumps({**record, **outcome.to_dict(), "method": method}, ensure_ascii=False) + "\n"
            for record, outcome in zip(records, outcomes, strict=True)
        ]
        _write_lines(lines, args.output, stdout)
    _report_skipped(errors, stderr)
    failed = [(i, o) for i, o in enumerate(outcomes) if not o.ok]
    print(
        f"llm {method['model']} prompt {method['prompt']}: {len(outcomes) - len(failed)} of "
        f"{len(outcomes)} text(s) anonymized; {usage['requests']} request(s) sent, "
        f"{usage['cache_hits']} from cache, {usage['prompt_tokens']}+"
        f"{usage['completion_tokens']} tokens"
        + (f", ${usage['cost_usd']:.4f}" if usage["cost_usd"] is not None else ""),
        file=stderr,
    )
    for index, outcome in failed:
        label = names[index] if names is not None else records[index].get("id")
        print(
            f"  not anonymized {label}: {outcome.error_reason} {outcome.error_detail}", file=stderr
        )
    if failed:
        print("run the same command again to retry them (answers received are cached)", file=stderr)
        return EXIT_SOME_FAILED
    return 0


def _read_text_folder(folder: Path) -> tuple[list[str], list[str], list[InputError]]:
    """Read every .txt file of `folder` (sorted), collecting undecodable ones as errors."""
    texts, names, errors = [], [], []
    for path in sorted(folder.glob("*.txt")):
        try:
            texts.append(path.read_bytes().decode("utf-8"))
            names.append(path.name)
        except UnicodeDecodeError as error:
            errors.append(InputError(f"{path.name}: not valid UTF-8 (byte {error.start + 1})"))
    return texts, names, errors


def command_train(args: argparse.Namespace, stdout: TextIO) -> int:
    """Train from the study corpus and print the per-split headline metrics."""
    from anonymize.train import TrainConfig, train

    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)}
    values["evaluate_splits"] = tuple(values["evaluate_splits"])
    metrics = train(TrainConfig(**values))
    for split, scored in metrics.items():
        print(
            f"{split}: weighted F1 (PSI) {scored['psi_categories']['weighted']['f1']:.3f}, "
            f"binary PSI F1 {scored['binary_psi']['f1']:.3f}, "
            f"name leak {scored['name_leak']['rate']:.1%}",
            file=stdout,
        )
    return 0


def command_evaluate(args: argparse.Namespace, stdout: TextIO) -> int:
    """Print the Table-1-style report for the model and the spaCy baseline on one split."""
    from anonymize.evaluate import run_evaluation

    run_evaluation(
        model_dir=args.model_dir,
        corpus_dir=args.corpus_dir,
        split=args.split,
        threshold=args.threshold,
        precision=args.precision,
        with_baseline=not args.no_baseline,
        output=args.output,
        save_metrics=args.save_metrics,
        rules=args.rules,
        rules_ablation=args.rules_ablation,
        emit=lambda line: print(line, file=stdout),
    )
    return 0


def command_calibrate(args: argparse.Namespace, stdout: TextIO) -> int:
    """Pick the threshold on the dev split, save it in config.json and print the sweep."""
    from anonymize.evaluate import calibrate_model

    chosen = calibrate_model(args.model_dir, args.corpus_dir)
    for row in chosen["candidates"]:
        print(
            f"threshold {row['threshold']:.2f}: weighted F1 (PSI) {row['weighted_f1_psi']:.4f}, "
            f"binary PSI F1 {row['binary_psi_f1']:.4f}, name leak {row['name_leak_rate']:.1%}",
            file=stdout,
        )
    print(f"chosen threshold {chosen['threshold']} ({chosen['criterion']})", file=stdout)
    return 0


def command_card(args: argparse.Namespace, stdout: TextIO) -> int:
    """Regenerate the model card so its numbers always come from the saved metrics."""
    from anonymize.model import DEFAULT_MODEL_DIR
    from anonymize.model_card import write_model_card

    model_dir = Path(args.model_dir) if args.model_dir else DEFAULT_MODEL_DIR
    comparison = Path(args.comparison) if args.comparison else None
    speed = Path(args.speed) if args.speed else None
    print(write_model_card(model_dir, comparison, speed), file=stdout)
    return 0


def tpi_masked_ranges(record: dict, line_number: int) -> list[tuple[int, int]]:
    """Return a TPI input line's masked ranges: its spans, else those its anonymized text implies.

    Raise InputError naming the line and the field when neither is usable.
    """
    from anonymize.tpi import masked_ranges_from_texts

    text = record["text"]
    if "spans" in record:
        spans = record["spans"]
        if not isinstance(spans, list):
            raise InputError(f"line {line_number}: field 'spans' must be a list")
        ranges = []
        for number, span in enumerate(spans, 1):
            start = span.get("start") if isinstance(span, dict) else None
            end = span.get("end") if isinstance(span, dict) else None
            valid = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end))
            if not valid or not 0 <= start <= end <= len(text):
                raise InputError(
                    f"line {line_number}: field 'spans' item {number} needs integer start <= end "
                    f"within the text (0..{len(text)})"
                )
            ranges.append((start, end))
        return ranges
    if isinstance(record.get("anonymized"), str):
        return masked_ranges_from_texts(text, record["anonymized"])
    raise InputError(f"line {line_number}: needs field 'spans' or 'anonymized' (a string)")


def command_tpi(args: argparse.Namespace, stdin: BinaryIO, stdout: TextIO, stderr: TextIO) -> int:
    """Print the corpus TPI (and per document) of JSONL {id, text, spans | anonymized} lines."""
    from anonymize.information import information_source
    from anonymize.tpi import TPIScorer

    if args.input not in (None, "-") and not Path(args.input).is_file():
        print(f"error: --input {args.input}: no such file", file=stderr)
        return EXIT_BAD_INPUT
    items, errors = [], []
    with contextlib.ExitStack() as stack:
        stream = stdin
        if args.input not in (None, "-"):
            stream = stack.enter_context(Path(args.input).open("rb"))
        for parsed in parse_jsonl(stream):
            if isinstance(parsed, InputError):
                errors.append(parsed)
                continue
            try:
                ranges = tpi_masked_ranges(parsed.record, parsed.line_number)
            except InputError as error:
                errors.append(error)
                continue
            items.append((str(parsed.record["id"]), parsed.record["text"], ranges))
    if errors:
        for error in errors:
            print(f"error: {error}", file=stderr)
        print("nothing computed; fix the input", file=stderr)
        return EXIT_BAD_INPUT
    if args.masked_lm and not Path(args.masked_lm).is_dir():
        print(f"error: --masked-lm {args.masked_lm}: not a local folder", file=stderr)
        return EXIT_BAD_INPUT
    options = {}
    if args.masked_lm:
        options = {"alternation": args.alternation, "max_segment_tokens": args.segment_tokens}
    source = information_source(args.masked_lm, **options)
    result = TPIScorer(source).corpus(items)
    stdout.write(json.dumps(result.to_dict(per_document=not args.summary_only)) + "\n")
    return 0


def _add_precision_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--precision",
        choices=ANONYMIZER_PRECISIONS,
        default="auto",
        help="int8 encoder where torch has an x86 int8 engine, else bf16 autocast where the "
        "CPU has native bf16 (auto); or force int8/bf16/fp32",
    )


def _add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """The --method llm flags; the key comes only from LLM_API_KEY, never a flag."""
    from anonymize.llm_prompts import DEFAULT_PROMPT, PROMPTS

    parser.add_argument(
        "--prompt",
        choices=sorted(PROMPTS),
        default=DEFAULT_PROMPT,
        help="paper 002's prompt, or the three it compares (with --method llm)",
    )
    parser.add_argument("--llm-base-url", default=None, help="overrides LLM_BASE_URL")
    parser.add_argument("--llm-model", default=None, help="overrides LLM_MODEL")
    parser.add_argument(
        "--llm-temperature", type=float, default=None, help="default: the server's (paper: 1)"
    )
    parser.add_argument("--llm-seed", type=int, default=None, help="sampling seed, where served")
    parser.add_argument("--llm-concurrency", type=int, default=None, help="requests at once")
    parser.add_argument(
        "--llm-cache-dir", default=None, help="answer cache (default runs/cache/llm)"
    )
    parser.add_argument(
        "--llm-json-mode",
        action="store_true",
        help="send response_format json_object, as paper 002 did with OpenAI",
    )


def _add_rules_argument(parser: argparse.ArgumentParser) -> None:
    from anonymize.rules import DEFAULT_RULES, RULE_ORDER

    parser.add_argument(
        "--rules",
        default="default",
        help=(
            "deterministic masking rules added to the model's spans: 'default' "
            f"({','.join(DEFAULT_RULES) or 'none'}), 'all', 'none' or a comma list of "
            f"{','.join(RULE_ORDER)}"
        ),
    )


def _add_train_verb(commands: argparse._SubParsersAction) -> None:
    """Add `train`, its flags built from TrainConfig by HfArgumentParser (as run_ner.py does).

    The flags it lacked are added as before: ``--no-...`` for the bools that default to
    False (argparse's BooleanOptionalAction gave every bool both), and `evaluate_splits`
    takes zero or more split names (a tuple field, which HfArgumentParser cannot type).
    """
    from anonymize.train import TrainConfig

    train = _verb(
        commands,
        "train",
        help="train the PSI tagger on the study corpus",
        dataclass_types=[TrainConfig],
    )
    for action in train._actions:
        if action.dest == "evaluate_splits":
            action.type, action.nargs = str, "*"
    for f in dataclasses.fields(TrainConfig):
        if f.type in ("bool", bool) and f.default is False:
            train.add_argument(
                f"--no-{f.name.replace('_', '-')}",
                dest=f.name,
                action="store_false",
                help=argparse.SUPPRESS,
            )


def _verb(
    commands: argparse._SubParsersAction, name: str, help: str, **options: Any
) -> argparse.ArgumentParser:
    """Add a subcommand whose --help ends with its worked example."""
    return commands.add_parser(
        name,
        help=help,
        epilog=EXAMPLES[name],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **options,
    )


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of all subcommands."""
    from transformers.hf_argparser import HfArgumentParser  # here: importing stays light

    parser = argparse.ArgumentParser(prog="python -m anonymize", description=__doc__)
    # Every verb's parser is an HfArgumentParser; only `train` gives it a dataclass.
    commands = parser.add_subparsers(dest="command", required=True, parser_class=HfArgumentParser)

    run = _verb(commands, "run", help="anonymize JSONL lines or a folder of .txt files")
    run.add_argument("--input", help="JSONL file of {id, text}; '-' or absent = stdin")
    run.add_argument("--output", help="JSONL output file; '-' or absent = stdout")
    run.add_argument("--input-dir", help="folder of .txt files (Textwash style)")
    run.add_argument("--output-dir", help="folder for the anonymized .txt files")
    run.add_argument(
        "--entities",
        nargs="+",
        help=f"categories to replace (default all): {', '.join(CATEGORIES)}",
    )
    run.add_argument(
        "--threshold",
        type=float,
        default=None,
        help=(
            "P(PSI) threshold; lower = stricter anonymisation (default: the model's own, "
            f"{saved_threshold()} for the shipped model)"
        ),
    )
    run.add_argument(
        "--operator",
        choices=sorted(OPERATORS),
        default="placeholder",
        help="placeholder (LOCATION_1), category ([LOCATION]) or redact (***)",
    )
    run.add_argument(
        "--method",
        choices=("model", "llm"),
        default="model",
        help="the shipped PSI model, or an LLM prompt through an OpenAI-compatible endpoint "
        "(LLM_BASE_URL, LLM_MODEL, LLM_API_KEY; see docs/anonymize.md)",
    )
    _add_llm_arguments(run)
    run.add_argument("--model-dir", default=None, help="model folder (default: shipped model)")
    run.add_argument("--batch-size", type=int, default=16, help="windows per forward pass")
    run.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    _add_precision_argument(run)
    _add_rules_argument(run)
    run.add_argument(
        "--skip-errors",
        action="store_true",
        help="skip bad lines/files and report them instead of stopping",
    )
    run.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bars (they are off anyway when stderr is not a terminal)",
    )

    _add_train_verb(commands)

    evaluate = _verb(commands, "evaluate", help="per-category scores on a person split")
    evaluate.add_argument("--model-dir", default=None, help="model folder (default: shipped)")
    evaluate.add_argument("--corpus-dir", default=None, help="folder with study1/2.jsonl")
    evaluate.add_argument("--split", default="test", choices=("train", "dev", "test"))
    evaluate.add_argument("--threshold", type=float, default=None, help="P(PSI) threshold")
    _add_precision_argument(evaluate)
    _add_rules_argument(evaluate)
    evaluate.add_argument(
        "--rules-ablation",
        action="store_true",
        help="also score no rules, each rule alone and all rules (one model pass)",
    )
    evaluate.add_argument("--no-baseline", action="store_true", help="skip the spaCy baseline")
    evaluate.add_argument("--output", default=None, help="write all metrics to this JSON file")
    evaluate.add_argument(
        "--save-metrics",
        action="store_true",
        help="also rewrite metrics_<split>.json in the model folder (after pipeline changes)",
    )

    calibrate = _verb(
        commands, "calibrate", help="choose the P(PSI) threshold on dev and save it with the model"
    )
    calibrate.add_argument("--model-dir", default=None, help="model folder (default: shipped)")
    calibrate.add_argument("--corpus-dir", default=None, help="folder with study1/2.jsonl")

    card = _verb(commands, "card", help="write MODEL_CARD.md from a model's metrics files")
    card.add_argument("--model-dir", default=None, help="model folder (default: shipped)")
    card.add_argument("--comparison", default=None, help="evaluate --output JSON to include")
    card.add_argument("--speed", default=None, help="benchmarks/anonymize_speed.py JSON")
    tpi = _verb(
        commands,
        "tpi",
        help="text preserved information (paper 002): share of the originals' IC kept",
    )
    tpi.add_argument(
        "--input", help="JSONL of {id, text, spans | anonymized}; '-' or absent = stdin"
    )
    tpi.add_argument(
        "--masked-lm",
        default=None,
        help="local masked-LM folder (e.g. bert-base-uncased: the paper's TPI); default: "
        "English word frequencies (wordfreq), reported as TPI-wordfreq",
    )
    tpi.add_argument("--alternation", type=int, default=6, help="N of the N-term alternation")
    tpi.add_argument("--segment-tokens", type=int, default=100, help="most tokens per segment")
    tpi.add_argument("--summary-only", action="store_true", help="leave out per-document rows")
    return parser


def main(
    argv: list[str] | None = None,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run one subcommand; return the process exit code."""
    args = build_parser().parse_args(argv)
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    # transformers' own bars ("Loading weights") follow ours: --quiet or no terminal, none.
    silence_library_bars(bars=progress_wanted(quiet=getattr(args, "quiet", False), stream=stderr))
    if args.command == "run":
        return command_run(args, stdin, stdout, stderr)
    if args.command == "train":
        return command_train(args, stdout)
    if args.command == "card":
        return command_card(args, stdout)
    if args.command == "tpi":
        return command_tpi(args, stdin, stdout, stderr)
    if args.command == "calibrate":
        return command_calibrate(args, stdout)
    return command_evaluate(args, stdout)

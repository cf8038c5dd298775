"""Command line: `python -m guard guard --input texts.jsonl --background bg.jsonl --k 5`.

The guard masks each text until the machine attackers rank its true person k-th or worse
(a rank promise against the attacks it consulted, not k-anonymity).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from anonymize import Span
from anonymize.labels import SPAN_CATEGORIES
from attacks.background import TEXT_SEPARATOR, background_row
from guard.greedy import GuardConfig, ordinal
from guard.scorers import DEFAULT_ATTACKS
from model_runtime.cli_progress import counting_bar, progress_wanted, silence_library_bars
from research_data.json_lines import json_lines

EXIT_BAD_INPUT = 2
GUARD_EXAMPLE = """example:
  python -m guard guard --input texts.jsonl --background docs/examples/background.jsonl \\
      --k 5 --attacks tfidf,bm25 --output guarded.jsonl
  texts.jsonl rows: {"id": "t1", "text": "...", "target": "odalys-brennecke", "spans"?: [...]}
  each output row lists the masked words, the rank reached per attack, and "residual_words":
  the words that still drive the match most, to mask by hand where the text is flagged."""


class GuardInputError(ValueError):
    """A problem with the input, naming the file, line and field."""


def _read_jsonl(path: Path, required: Sequence[str]) -> list[tuple[int, dict]]:
    """Return (line number, object) per non-empty line; raise naming every bad line."""
    rows, problems = [], []
    try:
        content = path.read_bytes()
    except OSError as error:
        raise GuardInputError(f"{path}: {error.strerror}") from None
    for parsed in json_lines(content):
        number, record, error = parsed.number, parsed.value, parsed.error
        if error is not None and error.kind == "encoding":
            problems.append(f"{path.name} line {number}: not valid UTF-8 (column {error.column})")
            continue
        if error is not None:
            problems.append(f"{path.name} line {number}: malformed JSON ({error.reason})")
            continue
        if not isinstance(record, dict):
            problems.append(f"{path.name} line {number}: expected a JSON object")
            continue
        missing = [key for key in required if not isinstance(record.get(key), str)]
        if missing:
            fields = ", ".join(map(repr, missing))
            problems.append(f"{path.name} line {number}: missing or non-string field {fields}")
            continue
        rows.append((number, record))
    if problems:
        raise GuardInputError("\n".join(problems))
    return rows


def _spans_of(record: dict, number: int, name: str) -> list[Span] | None:
    """Return the row's spans (None when it has none), checked against its text."""
    if "spans" not in record:
        return None
    text = record["text"]
    spans = []
    for position, item in enumerate(record["spans"] or []):
        where = f"{name} line {number}: spans[{position}]"
        try:
            start, end, category = int(item["start"]), int(item["end"]), str(item["category"])
        except (KeyError, TypeError, ValueError):
            raise GuardInputError(f"{where}: needs integer start, end and a category") from None
        if not 0 <= start < end <= len(text):
            raise GuardInputError(f"{where}: {start}-{end} outside the text ({len(text)} chars)")
        if category not in SPAN_CATEGORIES:
            raise GuardInputError(f"{where}: unknown category {category!r}")
        # Full confidence and no placeholder, whatever the row says: hand-given spans.
        spans.append(Span.from_dict({"start": start, "end": end, "category": category}, text))
    return spans


def load_background(path: Path) -> dict[str, str]:
    """Return person -> background text; several rows of one person are joined.

    Rows are the platform's background format (`attacks.background.background_row`):
    {"target", "text"}, with "name" accepted for "target".
    """
    parts: dict[str, list[str]] = {}
    for number, record in _read_jsonl(path, ("text",)):
        try:
            person, text = background_row(record, f"{path.name} line {number}")
        except ValueError as error:
            raise GuardInputError(str(error)) from None
        parts.setdefault(person, []).append(text)
    if len(parts) < 2:
        raise GuardInputError(f"{path.name}: the background needs at least two persons")
    return {name: TEXT_SEPARATOR.join(texts) for name, texts in parts.items()}


def command_guard(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Guard every input text and write one JSON line per text."""
    from guard.greedy import GuardItem, fit_attacks, guard_texts

    names = [n.strip() for n in args.attacks.split(",") if n.strip()]
    try:
        from attacks import ATTACKS

        unknown = sorted(set(names) - set(ATTACKS))
        if unknown or not names:
            raise GuardInputError(f"--attacks: unknown {unknown}; choose from {sorted(ATTACKS)}")
        config = GuardConfig(
            k=args.k,
            budget=args.budget,
            phrases=args.phrases,
            stop_words=args.stop_words,
            rare_zipf=args.rare_zipf,
        )
        background = load_background(Path(args.background))
        if args.k > len(background):
            raise GuardInputError(
                f"--k {args.k} is more than the {len(background)} candidates in "
                f"{Path(args.background).name}: no text can rank its person {ordinal(args.k)} or "
                f"worse; use --k {len(background)} or less, or a larger background"
            )
        rows = _read_jsonl(Path(args.input), ("id", "text", "target"))
        input_name = Path(args.input).name
        items = [
            GuardItem(r["id"], r["text"], r["target"], _spans_of(r, n, input_name) or [])
            for n, r in rows
        ]
        unknown_targets = sorted({i.target for i in items} - set(background))
        if unknown_targets:
            raise GuardInputError(
                f"targets without background: {unknown_targets[:5]} (every target must be a "
                "candidate in --background)"
            )
        needs_model = [i for (_, r), i in zip(rows, items, strict=True) if "spans" not in r]
    except (GuardInputError, ValueError) as error:
        print(f"error: {error}", file=stderr)
        return EXIT_BAD_INPUT
    bars = progress_wanted(quiet=args.quiet, stream=stderr)
    silence_library_bars(bars=bars)
    if needs_model and args.anonymize:
        from anonymize import Anonymizer

        anonymizer = Anonymizer.load(args.model_dir, rules=args.rules)
        for item, result in zip(
            needs_model,
            anonymizer.anonymize_many(
                [i.text for i in needs_model],
                progress=counting_bar("anonymize", enabled=bars, stream=stderr),
            ),
            strict=True,
        ):
            item.spans = list(result.spans)
    if not args.quiet:
        print(f"fitting {', '.join(names)} on {len(background)} candidates", file=stderr)
    attacks = fit_attacks(background, names, resamples=args.resamples)
    results = guard_texts(
        items, attacks, config, progress=counting_bar("guard", enabled=bars, stream=stderr)
    )
    from guard.residual import residual_words

    lines = [
        json.dumps({**r.to_dict(), "residual_words": words}, ensure_ascii=False) + "\n"
        for r, words in zip(results, residual_words(results, attacks), strict=True)
    ]
    if args.output:
        Path(args.output).write_text("".join(lines), encoding="utf-8")
    else:
        stdout.writelines(lines)
    flagged = sum(r.flagged for r in results)
    print(
        f"{len(results)} texts guarded, {flagged} flagged (an attack still ranks the person "
        f"above k = {config.k} once the budget is spent)",
        file=stderr,
    )
    return 0


@dataclass
class GuardArguments:
    """The flags of `python -m guard guard`: HfArgumentParser builds them from these fields
    (``--model-dir`` and ``--model_dir`` alike; a True bool also gets ``--no-...``), and the
    guard's own settings take their defaults from GuardConfig."""

    input: str = field(
        metadata={
            "help": "JSONL rows {id, text, target, spans?}; rows without spans are anonymized first"
        }
    )
    background: str = field(
        metadata={
            "help": 'JSONL rows {"target", "text"} (the platform\'s background format; "name" '
            "is accepted for target): the candidates' background, rows of a person joined"
        }
    )
    output: str | None = field(default=None, metadata={"help": "JSONL output (default: stdout)"})
    k: int = field(
        default=GuardConfig.k,
        metadata={
            "help": "stop once every attack ranks the true person k-th or worse (at most the "
            "number of candidates)"
        },
    )
    attacks: str = field(
        default=",".join(DEFAULT_ATTACKS),
        metadata={
            "help": "comma list of tfidf, bm25 (exact), dense, tria (leave-one-out on a shortlist)"
        },
    )
    budget: float = field(
        default=GuardConfig.budget,
        metadata={
            "help": "most words the guard may mask per text, as a share of its words (flagged "
            "beyond)"
        },
    )
    phrases: bool = field(
        default=GuardConfig.phrases,
        metadata={"help": "also mask adjacent two-word phrases (--no-phrases: single words only)"},
    )
    resamples: int = field(
        default=0,
        metadata={
            "help": "also beat each attack fitted on this many random halves of the background"
        },
    )
    stop_words: bool = field(
        default=GuardConfig.stop_words,
        metadata={
            "help": "may mask capitalised stop words the attacks' curation keeps "
            "(--no-stop-words: never)"
        },
    )
    rare_zipf: float | None = field(
        default=GuardConfig.rare_zipf,
        metadata={
            "help": "first mask every word the background never contains that is rarer in "
            "English than this Zipf frequency (wordfreq; e.g. 3.5); off by default"
        },
    )
    anonymize: bool = field(
        default=True,
        metadata={
            "help": "run the anonymizer first on rows without spans (--no-anonymize: guard "
            "them as they are)"
        },
    )
    model_dir: str | None = field(
        default=None, metadata={"help": "anonymizer model (default: shipped)"}
    )
    rules: str = field(default="default", metadata={"help": "anonymizer rules (see anonymize)"})
    quiet: bool = field(
        default=False,
        metadata={
            "help": "no progress bars, model-loading bars included (off anyway without a terminal)"
        },
    )


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of `python -m guard` (HfArgumentParser, imported here so
    that importing this module stays light)."""
    from transformers.hf_argparser import HfArgumentParser

    parser = argparse.ArgumentParser(prog="python -m guard", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=HfArgumentParser)
    commands.add_parser(
        "guard",
        dataclass_types=[GuardArguments],
        help="mask until the machine attackers rank the person k-th or worse",
        epilog=GUARD_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def main(
    argv: Sequence[str] | None = None, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr
) -> int:
    """Run the CLI and return its exit status."""
    args = build_parser().parse_args(argv)
    return command_guard(args, stdout, stderr)

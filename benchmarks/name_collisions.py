"""Pairs of target persons whose names the character cosine confuses, in both Textwash studies.

    python benchmarks/name_collisions.py [--data ../shared/data/textwash_study]

The Textwash paper counts a guess as identified when its character cosine to the true name
reaches 0.75, whoever else it matches. Two persons whose names score at or above the
threshold against each other let a guess of one count for the other ("Daniel Radcliffe" for a
text about Daniel Craig). For each study's target set this counts those pairs (at 0.70, 0.75
and 0.80), lists them at `--threshold`, and counts the texts that describe a person in such a
pair: the texts whose human rate the paper's rule can inflate. The shared copy holds no
intruder answers (`human_rates.csv` holds published rates only), so how many of the paper's
identifications the best-match rule changes cannot be counted here; the JSON says so.
Writes benchmarks/results/name_collisions.json.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")

from model_runtime.guess_scoring import Person, near_collisions  # noqa: E402
from research_data import textwash_study_dir  # noqa: E402
from research_data.json_lines import read_json_lines  # noqa: E402

THRESHOLDS = (0.70, 0.75, 0.80)


def study_persons(path: Path) -> tuple[list[Person], collections.Counter[str], int]:
    """Return the distinct persons of one study file (keyed by name, as the paper scores
    names), the texts per person, and the number of items that share a name with another."""
    texts: collections.Counter[str] = collections.Counter()
    items: dict[str, set[tuple[str, object]]] = collections.defaultdict(set)
    for _, row in read_json_lines(path):
        name = str(row["person"]).strip()
        texts[name] += 1
        items[name].add((row.get("type"), row.get("item")))
    persons = [Person(name, (name,)) for name in sorted(texts)]
    shared = sum(len(found) for found in items.values() if len(found) > 1)
    return persons, texts, shared


def measure(path: Path, threshold: float) -> dict:
    """Return the collisions of one study's target set."""
    persons, texts, shared = study_persons(path)
    started = time.perf_counter()
    pairs = near_collisions(persons, min(THRESHOLDS))
    seconds = time.perf_counter() - started
    at = [p for p in pairs if p.cosine >= threshold]
    exposed = {p.key_a for p in at} | {p.key_b for p in at}
    n = len(persons)
    return {
        "persons": n,
        "pairs": n * (n - 1) // 2,
        "texts": sum(texts.values()),
        "items_sharing_a_name": shared,
        "pairs_at_or_above": {f"{t:.2f}": sum(p.cosine >= t for p in pairs) for t in THRESHOLDS},
        "collisions": [{"a": p.name_a, "b": p.name_b, "cosine": round(p.cosine, 3)} for p in at],
        "persons_in_a_pair": len(exposed),
        "texts_about_persons_in_a_pair": sum(texts[k] for k in exposed),
        "check_seconds": round(seconds, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=textwash_study_dir())
    parser.add_argument("--threshold", type=float, default=0.75)
    parser.add_argument(
        "--out", type=Path, default=REPO / "benchmarks/results/name_collisions.json"
    )
    args = parser.parse_args()
    studies = {
        name: measure(args.data / f"{name}.jsonl", args.threshold)
        for name in ("study1", "study2")
        if (args.data / f"{name}.jsonl").is_file()
    }
    from did_work import require_work

    require_work(
        "name_collisions",
        studies=len(studies),
        persons=sum(s["persons"] for s in studies.values()),
    )
    result = {
        "data": str(args.data),
        "threshold": args.threshold,
        "studies": studies,
        "identifications_changed": None,
        "identifications_changed_why_not": "the shared copy holds no intruder answers "
        "(human_rates.csv holds the paper's published rates only): what the best-match rule "
        "changes needs the guesses",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "load_average": list(os.getloadavg()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for name, study in studies.items():
        print(
            f"{name}: {study['pairs_at_or_above'][f'{args.threshold:.2f}']} of {study['pairs']} "
            f"pairs of {study['persons']} persons at or above {args.threshold}; "
            f"{study['texts_about_persons_in_a_pair']} of {study['texts']} texts describe a "
            "person in such a pair"
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

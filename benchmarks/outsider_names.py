"""Wrong names from outside a study that the identification rules credit, and the
misspellings of the right name they keep.

    python benchmarks/outsider_names.py [--data ../shared/data] [--out FILE]

The best-match rule (issue 46) takes the best match among the study's persons only, so a
wrong name from outside the study whose letters resemble a study person's still counts as
identified: the dress rehearsal paid bonuses for "Kate Winslet" on texts about Kate
Middleton (0.770). This measures how often that happens with a population of real outside
names, the 543 actors of TRIA's WikiActors_500_random (read by path, never copied; those
that are a study's person left out), against both Textwash studies' persons: for each
outside name and study person, whether the guess would be credited as identifying that
person under the paper's rule, the best-match rule, and the best-match rule with the
person's surname required among the guess's words (`guess_scoring.surname_in_guess`, at
several rapidfuzz cutoffs; the platform's rule `best_match_surname` uses
`SURNAME_AGREEMENT_CUTOFF`). Beside it, what each rule costs: the share of one-typo
misspellings of each person's own name (every adjacent swap, deletion and doubling of a
letter) still identified. Writes benchmarks/results/outsider_names.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from did_work import require_work  # noqa: E402

from model_runtime.guess_scoring import (  # noqa: E402
    BEST_MATCH,
    BEST_MATCH_SURNAME,
    DEFAULT_THRESHOLD,
    PAPER,
    SURNAME_AGREEMENT_CUTOFF,
    Person,
    best_other,
    character_cosine,
    credit,
    surname_in_guess,
)
from research_data import shared_data_dir  # noqa: E402
from research_data.json_lines import read_json_lines  # noqa: E402

CUTOFFS = (SURNAME_AGREEMENT_CUTOFF, 80.0, 85.0)


def typos(name: str) -> list[str]:
    """Every one-typo spelling of `name`: an adjacent swap, a deletion or a doubled letter."""
    found: set[str] = set()
    for i in range(len(name)):
        if name[i].isalpha():
            found.add(name[:i] + name[i + 1 :])
            found.add(name[:i] + name[i] + name[i:])
        if i + 1 < len(name) and name[i].isalpha() and name[i + 1].isalpha():
            found.add(name[:i] + name[i + 1] + name[i] + name[i + 2 :])
    found.discard(name)
    return sorted(found)


def rules(guess: str, person: Person, persons: list[Person]) -> dict[str, bool]:
    """Whether `guess` is credited to `person` under each rule (the platform's `credit`)."""
    cosine = character_cosine(person.names[0], guess)
    _, other = best_other(guess, persons, person.key)
    credited = {
        rule: credit(cosine, other, DEFAULT_THRESHOLD, rule).identified
        for rule in (PAPER, BEST_MATCH)
    }
    for cutoff in CUTOFFS:
        agrees = surname_in_guess(guess, person.names, cutoff)
        earned = credit(cosine, other, DEFAULT_THRESHOLD, BEST_MATCH_SURNAME, agrees)
        credited[f"best_match_surname_{cutoff:.0f}"] = earned.identified
    return credited


def measure(persons: list[Person], outsiders: list[str]) -> dict:
    """Count outside names credited to some person, and typos kept, under each rule."""
    pairs: dict[str, list[dict]] = {}
    names_credited: dict[str, set[str]] = {}
    for guess in outsiders:
        for person in persons:
            for rule, credited in rules(guess, person, persons).items():
                if credited:
                    cosine = round(character_cosine(person.names[0], guess), 3)
                    pairs.setdefault(rule, []).append(
                        {"guess": guess, "person": person.names[0], "cosine": cosine}
                    )
                    names_credited.setdefault(rule, set()).add(guess)
    kept: dict[str, int] = {}
    total = 0
    for person in persons:
        for spelling in typos(person.names[0]):
            total += 1
            for rule, credited in rules(spelling, person, persons).items():
                kept[rule] = kept.get(rule, 0) + credited
    rule_names = list(rules(persons[0].names[0], persons[0], persons))
    return {
        "persons": len(persons),
        "outside_names": len(outsiders),
        "outside_names_credited": {r: len(names_credited.get(r, ())) for r in rule_names},
        "pairs_credited": {r: len(pairs.get(r, ())) for r in rule_names},
        "pairs": {r: sorted(pairs.get(r, []), key=lambda p: -p["cosine"]) for r in rule_names},
        "typos": total,
        "typos_identified": {r: kept.get(r, 0) for r in rule_names},
        "typos_identified_pct": {r: round(100 * kept.get(r, 0) / total, 1) for r in rule_names},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=shared_data_dir())
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/outsider_names.json")
    args = parser.parse_args()
    actors_file = args.data / "tria_wikiactors" / "WikiActors_500_random.json"
    actors = (
        [row["name"] for row in json.loads(actors_file.read_text(encoding="utf-8"))]
        if actors_file.is_file()
        else []
    )
    studies = {}
    for study in ("study1", "study2"):
        path = args.data / "textwash_study" / f"{study}.jsonl"
        if not path.is_file():
            continue
        names = sorted({str(row["person"]).strip() for _, row in read_json_lines(path)})
        persons = [Person(name, (name,)) for name in names]
        known = {name.casefold() for name in names}
        outsiders = [name for name in actors if name.casefold() not in known]
        studies[study] = measure(persons, outsiders)
    require_work(
        "outsider_names",
        outside_names=len(actors),
        studies=len(studies),
    )
    result = {
        "data": str(args.data),
        "threshold": DEFAULT_THRESHOLD,
        "surname_cutoffs": CUTOFFS,
        "studies": studies,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for name, study in studies.items():
        print(
            name,
            json.dumps(study["outside_names_credited"]),
            json.dumps(study["typos_identified_pct"]),
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

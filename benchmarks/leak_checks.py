"""How often the review page's leak checks fire on Textwash's own published texts.

    python benchmarks/leak_checks.py [--data ../shared/data/textwash_study]

Textwash's anonymized outputs of the study corpus (study1 + study2) are what a reviewer would
have been shown; the rate of each check on them says how much of a reviewer's queue each
check fills, and so which checks may hold a draft back from bulk release and which stay
hints (`intruder.selectors.leak_checks.BLOCKING_KINDS`). Writes benchmarks/results/leak_checks.json.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")

from research_data import textwash_study_dir  # noqa: E402
from research_data.json_lines import read_json_lines  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=textwash_study_dir())
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/leak_checks.json")
    args = parser.parse_args()

    from intruder.selectors.leak_checks import BLOCKING_KINDS, leak_findings

    texts = flagged = blocking = 0
    by_kind: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    for name in ("study1.jsonl", "study2.jsonl"):
        for _, row in read_json_lines(args.data / name):
            texts += 1
            findings = leak_findings(row["textwash"], [row["person"]])
            kinds = {f.kind for f in findings}
            by_kind.update(kinds)
            flagged += bool(kinds)
            blocking += bool(kinds & BLOCKING_KINDS)
            for f in findings:
                if len(examples[f.kind]) < 5:
                    examples[f.kind].append(f.message)
    from did_work import require_work

    require_work("leak_checks", texts=texts)
    result = {
        "texts": texts,
        "texts_with_any_finding": flagged,
        "texts_held_back_by_blocking_kinds": blocking,
        "texts_per_kind": dict(sorted(by_kind.items())),
        "pct_per_kind": {k: round(100 * n / texts, 1) for k, n in sorted(by_kind.items())},
        "blocking_kinds": sorted(BLOCKING_KINDS),
        "examples": examples,
    }
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "examples"}, indent=1))


if __name__ == "__main__":
    main()

"""Honest near-misses of the canary matcher: how often does real prose match a fresh canary?

    nice -n 10 python benchmarks/canary_near_misses.py \
        --out benchmarks/results/canary_near_misses.json [--canaries 40] [--seed 0]

Issue 48 let the matcher take two edits, the word reversed and its halves apart
(`intruder/evidence/canary.py`). Honest answers are people writing about people, so the
honest side is every sentence of the public descriptions in ../shared/data (the Textwash
study's originals and the WikiActors texts, read by path, never copied), each checked
against fresh canary words as a served text would get them. Writes the sentences, canaries,
checks, false matches with a Wilson 95 % interval, and each false match's sentence length
(never its text).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def wilson(hits: int, n: int, z: float = 1.96) -> list[float]:
    share = hits / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((share * (1 - share) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def sentences() -> list[str]:
    """Return the unique sentences of the public descriptions."""
    from research_data import textwash_study_dir, tria_wikiactors_dir

    texts = []
    for name in ("study1.jsonl", "study2.jsonl"):
        for line in (textwash_study_dir() / name).read_text().splitlines():
            if line.strip():
                texts.append(json.loads(line).get("original", ""))
    for name in ("WikiActors_500_random.json", "WikiActors_50_eval.json"):
        for item in json.loads((tria_wikiactors_dir() / name).read_text()):
            texts += [value for value in item.values() if isinstance(value, str)]
    found = {s.strip() for text in texts for s in re.split(r"(?<=[.!?])\s+|\n+", text)}
    return sorted(s for s in found if s)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--canaries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sentences", type=int, default=0, help="Check only the first N sentences (0: all)."
    )
    args = parser.parse_args()
    from intruder.evidence import canary as module

    # Fresh words as served (the module draws with `secrets`; a seeded draw of the same
    # construction makes the run repeatable).
    rng = random.Random(args.seed)
    module.secrets = rng  # type: ignore[assignment]
    words = [module.new_canary_word() for _ in range(args.canaries)]
    honest = sentences()[: args.sentences or None]
    started = time.time()
    matches = []
    for word in words:
        for sentence in honest:
            if module.canary_in(sentence, word):
                matches.append({"canary": word, "sentence_chars": len(sentence)})
    checks = len(words) * len(honest)
    from did_work import require_work

    require_work("canary_near_misses", checks=checks)
    result = {
        "sentences": len(honest),
        "canaries": len(words),
        "checks": checks,
        "false_matches": len(matches),
        "false_match_rate": len(matches) / checks,
        "wilson_95": wilson(len(matches), checks),
        "matches": matches[:50],
        "matcher": "NFKC/look-alike fold; exact or reversed in the letter stream, halves as "
        "words, <= 2 edits (OSA) on a word, <= 1 on two words joined or on the reversed word",
        "data": ["textwash_study/study1.jsonl", "textwash_study/study2.jsonl",
                 "tria_wikiactors/WikiActors_500_random.json",
                 "tria_wikiactors/WikiActors_50_eval.json"],
        "seconds": round(time.time() - started, 1),
        "command": " ".join(sys.argv),
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "matches"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

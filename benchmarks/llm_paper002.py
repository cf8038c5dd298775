"""Paper 002's comparison of LLM anonymization prompts, on WikiActors, through a real endpoint.

Anonymizes every `original_abstract` of a WikiActors file with each prompt (paper 002's own,
Man vs the machine, Sparks, Student) through the OpenAI-compatible endpoint of the
environment (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY), adds one column per prompt beside the
file's own methods, and attacks every column (TRIR per attack and the strongest adversary;
add `llm` to `--attacks` for the closed-world LLM reader). Writes the augmented table, the
attack outputs and one JSON with TRIR, failures per prompt, tokens and cost, the model and
every sampling setting. Answers are cached (runs/cache/llm), so a crashed run resumes free.

No quality claim comes from this repository: no LLM can be reached from its machines. Run::

    LLM_BASE_URL=https://api.openai.com/v1 LLM_MODEL=gpt-4o-mini LLM_API_KEY=... \\
        python benchmarks/llm_paper002.py --data WikiActors_500_random.json \\
        --attacks tfidf,bm25,tria --out runs/llm-paper002
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from anonymize.llm import LLMAnonymizer  # noqa: E402
from anonymize.llm_prompts import PROMPTS  # noqa: E402
from attacks import AttackConfig  # noqa: E402
from attacks.runner import attack_names, run_many_from_config  # noqa: E402
from llm import LLMClient, LLMSettings  # noqa: E402
from research_data import missing_reason, tria_wikiactors_dir  # noqa: E402

SOURCE_COLUMN = "original_abstract"


def anonymize_column(frame: Any, prompt: str, settings: LLMSettings) -> dict[str, Any]:
    """Add `llm-<prompt>_abstract` to `frame`; return failures, usage and timing."""
    start = time.perf_counter()
    with LLMClient(settings) as client:
        outcomes = LLMAnonymizer(client, prompt).anonymize_many(list(frame[SOURCE_COLUMN]))
        usage = client.usage.to_dict()
    # A failed text stays empty: the attacks skip it and its n says so; never the original.
    frame[f"llm-{prompt}_abstract"] = [o.text if o.ok else None for o in outcomes]
    failures: dict[str, int] = {}
    for outcome in outcomes:
        if not outcome.ok:
            failures[outcome.error_reason] = failures.get(outcome.error_reason, 0) + 1
    return {
        "n": len(outcomes),
        "failed": failures,
        "unaligned_terms_per_text": sum(len(o.unaligned_terms) for o in outcomes)
        / max(1, len(outcomes)),
        "usage": usage,
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="WikiActors_50_eval.json", help="a WikiActors file")
    parser.add_argument("--prompts", default=",".join(PROMPTS), help="comma list of prompts")
    parser.add_argument("--attacks", default="tfidf,bm25", help="attacks to run on every column")
    parser.add_argument("--out", required=True, help="output folder (outside the repository)")
    args = parser.parse_args(argv)

    import pandas as pd

    folder = tria_wikiactors_dir()
    path = folder / args.data
    if not path.is_file():
        print(missing_reason(folder), file=sys.stderr)
        return 2
    settings = LLMSettings.from_env()
    with LLMClient(settings) as client:
        client.check()  # fail before any text is sent
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.read_json(path)
    prompts = [p.strip() for p in args.prompts.split(",") if p.strip()]
    anonymization = {prompt: anonymize_column(frame, prompt, settings) for prompt in prompts}
    table = out / "wikiactors_with_llm_columns.json"
    frame.to_json(table, orient="records")
    config = AttackConfig(data_file_path=str(table), output_folder_path=str(out / "attacks"))
    result = run_many_from_config(config, attack_names(args.attacks), out / "attacks")
    # Each TRIR with its n; a column with no anonymized text (every answer failed) has none.
    first_run = next(iter(result.runs.values()))
    n_by_column = {column: values["n"] for column, values in first_run.final["trir"].items()}
    trir = {
        attack: {
            column: {
                "trir_pct": value if n_by_column.get(column) else None,
                "n": n_by_column.get(column, 0),
            }
            for column, value in columns.items()
        }
        for attack, columns in result.final["trir_by_attack"].items()
    }
    from did_work import require_work

    require_work(
        "llm_paper002",
        anonymized_texts=sum(n_by_column.values()),
        attacks=len(result.final["trir_by_attack"]),
    )
    summary = {
        "data": args.data,
        "llm": settings.sampling(),
        "prompts": anonymization,
        "attacks": args.attacks,
        "trir_by_attack": trir,
        "trir_unit": "% of documents whose true person an attack ranks first",
    }
    (out / "llm_paper002.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(json.dumps(trir, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

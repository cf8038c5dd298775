"""The simulated crowd intruder: re-identification with as much knowledge as one person has.

The k-fold attack of `human_vs_machine_textwash.py` knows each candidate through every other
writer's description (about 36 per person in study 1, 43 in study 2) and re-identifies about
90 % of the Textwash texts, where the paper's intruders identified 26 % (study 2). One
writer's description is a fair stand-in for what one intruder knows about a person, so here
the background holds b descriptions per candidate (`attacks.budget`: b = 1, 2, 4, 8, all;
drawn at random, never the text's own; R resamples averaged, k folds each):

- knowledge_budget[study][b][attack]: the study's own persons as candidates;
- pooled[study][b][attack]: a same-genre open world, both studies' persons as candidates
  (the ten famous persons of study 1 are also in study 2: one candidate, known through both
  studies' descriptions), each known through b crowd descriptions;
- predicted_human[b] (and predicted_human_pooled[b]): the predicted-human model
  (`intruder/risk/predicted.py`) refitted on study 2 with each budget's evidence (mean
  reciprocal rank over attacks and resamples), leave-one-person-out rho and MAE beside the
  mean-only baseline, and study 1's per-type prediction from the study-2 fit.

Each cell: {trir, ci_low, ci_high, rho, rho_ci_low, rho_ci_high, n, resamples}. TRIR is the
mean over resamples; its Wilson interval counts the n texts (the resamples are not
independent texts, so they do not narrow it). rho: Spearman between the per-person machine
TRIR and the paper's per-person human rate (study 1: the ten famous persons; study 2: all
twenty), Fisher-z interval. The texts attacked are the Textwash outputs the intruders saw;
the background is the clear descriptions. Writers are not in the public data, so each text
is its own group (no twin can be excluded; none is known).

    flock /tmp/cpu.lock python benchmarks/crowd_intruder.py --out DIR
    python benchmarks/crowd_intruder.py --out DIR --limit 20 --resamples 2   # smoke
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from attacks.background import BackgroundRecord  # noqa: E402
from attacks.budget import budget_label, parse_budget, run_budget  # noqa: E402
from benchmarks.open_world_ladder import normalise_name  # noqa: E402
from research_data import textwash_study_dir  # noqa: E402

STUDIES = {"study1": 1, "study2": 2}
ATTACKS = ("tfidf", "bm25", "dense")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="folder for summary.json")
    parser.add_argument("--attacks", default=",".join(ATTACKS), help="comma list")
    parser.add_argument("--budgets", default="1,2,4,8,all", help="descriptions per candidate")
    parser.add_argument("--resamples", type=int, default=10, help="R (at least 10 for RESULTS)")
    parser.add_argument("--folds", type=int, default=5, help="k folds per resample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=0, help="smoke: every n-th text (0 = all)")
    parser.add_argument("--data", type=Path, default=textwash_study_dir())
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="spaCy and embedding cache shared by every budget (default: DIR/cache)",
    )
    return parser.parse_args(argv)


def person_keys(rows: Sequence[dict]) -> dict[str, str]:
    """Return text id -> person key: the name, or name + type and item where one name is two
    persons (study 1's two fictitious "Brantley Ratke" profiles)."""
    items: dict[str, set] = {}
    for row in rows:
        items.setdefault(row["person"], set()).add((row["study"], row["type"], row["item"]))
    keys = {}
    for row in rows:
        same_study = {i for i in items[row["person"]] if i[0] == row["study"]}
        name = row["person"]
        keys[row["id"]] = f"{name} ({row['type']} {row['item']})" if len(same_study) > 1 else name
    return keys


def load_study(data: Path, name: str, limit: int) -> list[dict]:
    """Return one study's rows (every `limit`-th with a limit)."""
    lines = (data / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return rows[::limit] if limit else rows


def records_of(rows: Sequence[dict], keys: dict[str, str]) -> list[BackgroundRecord]:
    """Return the background records: the clear descriptions, writers unknown."""
    return [BackgroundRecord(r["id"], keys[r["id"]], None, r["original"].strip()) for r in rows]


def human_rates(published: pd.DataFrame, study: int) -> dict[str, float]:
    """Return normalised person name -> the paper's % identified (persons with a rate)."""
    rows = published[(published["study"] == study) & (published["person"] != "ALL")]
    return dict(zip(rows["person"].map(normalise_name), rows["pct_identified"], strict=True))


def cell(frame: pd.DataFrame, human: dict[str, float], resamples: int) -> dict[str, Any]:
    """Return TRIR with its Wilson interval and the per-person rho with its Fisher interval."""
    from intruder.analysis.intervals import wilson
    from intruder.risk.stats import spearman_with_ci

    correct = frame["true_rank"] == 1
    n = int(frame["text_id"].nunique())
    trir = 100.0 * float(correct.mean())
    rate = wilson(round(trir * n / 100), n)
    per_person = (
        frame.assign(correct=correct).groupby("target")["correct"].mean().mul(100).to_dict()
    )
    pairs = [
        (human[normalise_name(p)], v) for p, v in per_person.items() if normalise_name(p) in human
    ]
    rho = spearman_with_ci([h for h, _ in pairs], [m for _, m in pairs])
    return {
        "trir": trir,
        "ci_low": rate.ci_low,
        "ci_high": rate.ci_high,
        "rho": rho.rho,
        "rho_ci_low": rho.ci_low,
        "rho_ci_high": rho.ci_high,
        "n": n,
        "resamples": int(frame["resample"].nunique()),
        "persons_with_human_rate": len(pairs),
        "machine_mean_pct_on_those_persons": float(np.mean([m for _, m in pairs]))
        if pairs
        else None,
        "human_mean_pct": float(np.mean([h for h, _ in pairs])) if pairs else None,
    }


def text_evidence(frame: pd.DataFrame, group_of: dict[str, str]) -> pd.DataFrame:
    """Return one row per text: person, group and the evidence of the predicted-human model
    (reciprocal rank of the true person, 0 when unranked, averaged over attacks and resamples)."""
    rr = 1.0 / frame["true_rank"].astype(float)
    texts = frame.assign(rr=rr.fillna(0.0)).groupby(["text_id", "target"], as_index=False)["rr"]
    out = texts.mean().rename(columns={"target": "target_key", "rr": "evidence"})
    out["group"] = out["text_id"].map(group_of)
    return out


def predicted_human(
    evidence: dict[str, pd.DataFrame],
    published: pd.DataFrame,
    attacks: Sequence[str],
    n_candidates: int,
) -> dict[str, Any]:
    """Refit the predicted-human model on study 2's evidence; LOPO rho, MAE and the baseline."""
    from benchmarks.predicted_human_fit import person_table
    from intruder.risk import predicted as model

    texts = evidence["study2"]
    persons = person_table(texts, published, STUDIES["study2"])
    out: dict[str, Any] = model.lopo_validation(persons, texts, attacks, n_candidates)
    if "note" in out:
        return {"error": f"study 2: {out['note']}"}
    calibration = model.fit(
        persons, texts, fitted_on="study 2", n_candidates=n_candidates, attacks=attacks, draws=0
    )
    out["a"], out["b"] = calibration.a, calibration.b
    if "study1" in evidence:
        table = model.predict_persons(calibration, evidence["study1"])
        weighted = table.assign(w=table["predicted_pct"] * table["n_texts"]).groupby("group")
        out["study1_from_study2"] = (weighted["w"].sum() / weighted["n_texts"].sum()).to_dict()
    return out


# Attacks whose scores depend on which texts were embedded together: the encoder's float
# results change in the last bits with the batch a chunk is padded in, so these attack each
# study's texts of the pooled world on their own, in the order of the original run.
BATCH_SENSITIVE = ("dense",)


def pooled_rows(
    attack: Callable[..., list[dict]],
    attacks: Sequence[str],
    mine: dict[str, str],
    queries: dict[str, str],
    shared: dict[str, list[dict]],
) -> list[dict]:
    """Return one study's rows of the pooled world at one budget, in run_budget's order.

    Both studies' pooled worlds draw the same backgrounds (the draws depend on the records,
    budget, R, k and seed, not on which texts are attacked), so the lexical attacks are fitted
    once per draw and attack every text of both studies; each study keeps its own rows.
    ``shared`` (attack -> rows) holds them for the other study.
    """
    lexical = [a for a in attacks if a not in BATCH_SENSITIVE]
    separate = [a for a in attacks if a in BATCH_SENSITIVE]
    rows = attack(separate, queries=mine) if separate else []
    if lexical and not shared:
        shared.update({a: [] for a in lexical})
        for row in attack(lexical, queries=queries):
            shared[row["attack"]].append(row)
    rows += [row for a in lexical for row in shared[a] if row["text_id"] in mine]
    order = {name: i for i, name in enumerate(attacks)}
    # Per draw, attacks in the order asked, each over the draw's texts in record order.
    return sorted(rows, key=lambda r: (r["resample"], r["fold"], order[r["attack"]]))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from attacks.config import AttackConfig
    from attacks.prepared import PreparedTexts

    args.out.mkdir(parents=True, exist_ok=True)
    attacks = [a for a in args.attacks.split(",") if a]
    budgets = [parse_budget(v) for v in args.budgets.split(",") if v.strip()]
    started, cpu_started = time.perf_counter(), time.process_time()
    load_at_start = list(os.getloadavg())
    published = pd.read_csv(args.data / "human_rates.csv")
    rows_by_study = {name: load_study(args.data, name, args.limit) for name in STUDIES}
    all_rows = [row for rows in rows_by_study.values() for row in rows]
    keys = person_keys(all_rows)
    group_of = {row["id"]: row["type"] for row in all_rows}
    queries = {row["id"]: row["textwash"] for row in all_rows}
    pooled_records = records_of(all_rows, keys)
    config = AttackConfig(cache_dir=str(args.cache_dir or args.out / "cache"))
    prepared = PreparedTexts(config)
    reuse: dict = {}  # one instance per attack: the dense embeddings serve every budget
    summary: dict[str, Any] = {
        "attacks": attacks,
        "budgets": [budget_label(b) for b in budgets],
        "resamples": args.resamples,
        "folds": args.folds,
        "seed": args.seed,
        "subsample_every": args.limit or None,
        "texts_attacked": "textwash (the anonymized texts the paper's intruders saw)",
        "background": "clear crowd descriptions, b per candidate; writers unknown",
        "knowledge_budget": {},
        "pooled": {},
        "candidates": {},
        "wall_seconds": {},
    }
    t = time.perf_counter()
    # spaCy once over every text, in bulk: the curation and B_D' caches then serve every
    # fold (per-text results, whatever the batch; the dense encoder's are not, see pooled_rows).
    prepared.background({"all": [r.text for r in pooled_records]}, curate=True)
    prepared.documents(list(queries.values()), curate=True)
    summary["wall_seconds"]["pretreatment"] = time.perf_counter() - t
    shared: dict[str, dict[str, list[dict]]] = {}  # budget -> the pooled lexical rows
    evidence: dict[str, dict[str, dict[str, pd.DataFrame]]] = {"closed": {}, "pooled": {}}
    candidates: dict[str, dict[str, int]] = {"closed": {}, "pooled": {}}
    total_rows = 0
    for name, number in STUDIES.items():
        human = human_rates(published, number)
        own = records_of(rows_by_study[name], keys)
        mine = {row["id"]: queries[row["id"]] for row in rows_by_study[name]}
        for setting, records, key in (
            ("closed", own, "knowledge_budget"),
            ("pooled", pooled_records, "pooled"),
        ):
            for budget in budgets:
                label = budget_label(budget)
                t = time.perf_counter()
                attack = functools.partial(
                    run_budget,
                    prepared,
                    records=records,
                    budget=budget,
                    resamples=args.resamples,
                    folds=args.folds,
                    seed=args.seed,
                    reuse=reuse,
                )
                if setting == "pooled":
                    rows = pooled_rows(attack, attacks, mine, queries, shared.setdefault(label, {}))
                else:
                    rows = attack(attacks, queries=mine)
                total_rows += len(rows)
                frame = pd.DataFrame(rows)
                summary[key].setdefault(name, {})[label] = {
                    attack: cell(part, human, args.resamples)
                    for attack, part in frame.groupby("attack")
                }
                evidence[setting].setdefault(label, {})[name] = text_evidence(frame, group_of)
                candidates[setting][name] = int(frame["candidates"].median())
                seconds = time.perf_counter() - t
                summary["wall_seconds"][f"{name}_{setting}_{label}"] = seconds
                trir = {a: round(v["trir"], 1) for a, v in summary[key][name][label].items()}
                print(f"{name} {setting} b={label}: {trir} ({seconds:.0f} s)", flush=True)
    summary["candidates"] = candidates
    from did_work import require_work

    require_work("crowd_intruder", texts=len(queries), attack_rows=total_rows)
    for setting, key in (("closed", "predicted_human"), ("pooled", "predicted_human_pooled")):
        summary[key] = {
            label: predicted_human(
                by_study, published, attacks, candidates[setting].get("study2", 0)
            )
            for label, by_study in evidence[setting].items()
            if "study2" in by_study
        }
    summary["best_match"] = best_match(summary)
    summary["wall_seconds"]["total"] = time.perf_counter() - started
    summary["cpu_seconds_main_process"] = time.process_time() - cpu_started
    summary["machine"] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_at_start": load_at_start,
        "load_average_at_end": list(os.getloadavg()),
    }
    (args.out / "summary.json").write_text(
        json.dumps(summary, indent=1, default=float), encoding="utf-8"
    )
    print(json.dumps({k: summary[k] for k in ("best_match", "predicted_human")}, indent=1))
    return 0


def best_match(summary: dict[str, Any]) -> dict[str, Any]:
    """Return per study, setting and attack the budget whose machine rate on the persons with
    a human rate is nearest the humans' mean rate on them (a comparison, not a human rate)."""
    out: dict[str, Any] = {}
    for key in ("knowledge_budget", "pooled"):
        for study, by_budget in summary[key].items():
            for attack in summary["attacks"]:
                gaps = {
                    label: cells[attack]["machine_mean_pct_on_those_persons"]
                    - cells[attack]["human_mean_pct"]
                    for label, cells in by_budget.items()
                    if attack in cells and cells[attack]["human_mean_pct"] is not None
                }
                if gaps:
                    label = min(gaps, key=lambda b: abs(gaps[b]))
                    out.setdefault(key, {}).setdefault(study, {})[attack] = {
                        "budget": label,
                        "machine_minus_human_pp": gaps[label],
                    }
    return out


if __name__ == "__main__":
    raise SystemExit(main())

"""The human-vs-machine risk report: tables, statistics and a summary written from the numbers.

Django-free: it takes tidy frames (`intruder.selectors.risk` builds them from the database,
the benchmark from its own runs).

results: one row per attack result.
    description_id, method, attack, fold, predicted_key, true_rank, true_prob, masked_share,
    target_key, target_name, group, external_id
human_texts: one row per judged text (the per-text analysis plus its method).
    text_id, description_id, method, target_key, target_name, group, n_judgments,
    mean_cosine, pct_judgments_identified, identified
human_rates (optional, instead of human_texts for per-person rates): published rates,
    target_key, target_name, group, human_n, human_pct_identified, human_se

A text counts as identified by the machine when the attack ranks its true person first;
by the strongest adversary when any attack does (`attacks.strongest`). For the per-text
agreement, a text counts as identified by humans when more than half of its judgments
named the person (a majority of intruders).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from intruder.analysis.risk_stats import Agreement, Correlation, agreement, spearman_with_ci
from intruder.attack_methods import is_baseline

STRONGEST = "strongest"
GROUP_ORDER = {"famous": 0, "semifamous": 1, "fictitious": 2}
KEYS = {"target": ["group", "target_key", "target_name"], "group": ["group"]}

RISK_TABLE_TITLES: dict[str, str] = {
    "trir_by_method": "TRIR per method and attack, with the share of words masked",
    "rates_group": "Per group: humans beside each attack and the strongest adversary",
    "rates_target": "Per person: humans beside each attack and the strongest adversary",
    "agreement": "Per-text agreement of humans and machine (kappa, McNemar, AUC)",
    "per_text": "Per text: human results beside each attack",
    "machine_per_text": "Per text and method: every attack's outcome (all methods)",
}


def attack_names(results: pd.DataFrame) -> list[str]:
    """Return the attacks in the results, in a stable order."""
    return sorted(results["attack"].unique()) if not results.empty else []


def machine_per_text(results: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (description, method): each attack's outcome and the strongest's."""
    keys = ["description_id", "method", "external_id", "group", "target_key", "target_name"]
    if results.empty:
        return pd.DataFrame(columns=[*keys, "masked_share"])
    frame = results.copy()
    frame["correct"] = frame["true_rank"] == 1
    frame["rank_for_order"] = frame["true_rank"].fillna(np.inf)
    frame["prob_for_order"] = frame["true_prob"].fillna(0.0)
    wide = frame.pivot(index=keys, columns="attack", values=["correct", "true_rank", "true_prob"])
    wide.columns = [f"{attack}_{value}" for value, attack in wide.columns]
    wide = wide.reset_index()
    ordered = frame.sort_values(["rank_for_order", "prob_for_order"], ascending=[True, False])
    best = ordered.groupby(["description_id", "method"], as_index=False).first()
    hits = (
        frame[frame["correct"]]
        .groupby(["description_id", "method"])["attack"]
        .agg(lambda a: "+".join(sorted(a)))
        .rename(f"{STRONGEST}_attacks")
    )
    best = best[["description_id", "method", "true_rank", "true_prob", "masked_share"]].rename(
        columns={"true_rank": f"{STRONGEST}_true_rank", "true_prob": f"{STRONGEST}_true_prob"}
    )
    best[f"{STRONGEST}_correct"] = best[f"{STRONGEST}_true_rank"] == 1
    table = wide.merge(best, on=["description_id", "method"]).merge(
        hits, left_on=["description_id", "method"], right_index=True, how="left"
    )
    table[f"{STRONGEST}_attacks"] = table[f"{STRONGEST}_attacks"].fillna("")
    for attack in [*attack_names(results), STRONGEST]:
        column = f"{attack}_correct"
        if column in table:
            table[column] = table[column].astype("boolean")
    table["_order"] = table["group"].map(GROUP_ORDER).fillna(9)
    table = table.sort_values(["method", "_order", "target_name", "description_id"])
    return table.drop(columns="_order").reset_index(drop=True)


def human_vs_machine_per_text(machine: pd.DataFrame, human_texts: pd.DataFrame) -> pd.DataFrame:
    """Return the judged texts with their human results beside every attack's outcome."""
    if human_texts is None or human_texts.empty or machine.empty:
        return pd.DataFrame()
    human = human_texts[human_texts["n_judgments"] > 0].copy()
    human["human_majority_identified"] = human["pct_judgments_identified"] > 50
    columns = [
        "text_id",
        "description_id",
        "method",
        "n_judgments",
        "pct_judgments_identified",
        "mean_cosine",
        "human_majority_identified",
    ]
    return human[columns].merge(machine, on=["description_id", "method"], how="inner")


def human_rates_from_texts(human_texts: pd.DataFrame, by: str) -> pd.DataFrame:
    """Return per person or group: judged texts, % identified (mean cosine >= cut-off), SE."""
    from intruder.analysis.risk_stats import percent_se

    keys = KEYS[by]
    judged = human_texts[human_texts["n_judgments"] > 0]
    rows = []
    for key, part in judged.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        identified = part["identified"].astype(bool)
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "human_n": len(part),
                "human_pct_identified": 100.0 * identified.mean(),
                "human_se": percent_se(identified),
            }
        )
    return pd.DataFrame(rows, columns=[*keys, "human_n", "human_pct_identified", "human_se"])


def machine_rates(machine: pd.DataFrame, method: str, by: str) -> pd.DataFrame:
    """Return per person or group, for one method: n texts, TRIR and SE of each attack."""
    from intruder.analysis.risk_stats import percent_se

    keys = KEYS[by]
    part = machine[machine["method"] == method]
    attacks = [c[: -len("_correct")] for c in part.columns if c.endswith("_correct")]
    rows = []
    for key, texts in part.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = {**dict(zip(keys, key, strict=True)), "n_texts": len(texts)}
        for attack in attacks:
            outcomes = texts[f"{attack}_correct"].fillna(False).astype(bool)
            row[f"trir_{attack}"] = 100.0 * outcomes.mean()
            row[f"se_{attack}"] = percent_se(outcomes)
        rows.append(row)
    return pd.DataFrame(rows)


def rates_beside(
    machine: pd.DataFrame, human_rates: pd.DataFrame | None, method: str, by: str
) -> pd.DataFrame:
    """Return human rates beside the machine's for the method humans saw."""
    table = machine_rates(machine, method, by)
    if human_rates is not None and not human_rates.empty and not table.empty:
        on = ["group", "target_key"] if by == "target" else ["group"]
        human = human_rates.drop(columns=[c for c in ("target_name",) if by == "target"])
        table = (
            human.merge(table, on=on, how="outer")
            if by == "group"
            else table.merge(human, on=on, how="left")
        )
        front = [*KEYS[by], "human_n", "human_pct_identified", "human_se"]
        table = table[[*front, *[c for c in table.columns if c not in front]]]
    if not table.empty:
        table["_order"] = table["group"].map(GROUP_ORDER).fillna(9)
        table = table.sort_values(["_order", *KEYS[by][1:]]).drop(columns="_order")
    return table.reset_index(drop=True)


def trir_by_method(machine: pd.DataFrame, labels: dict[str, str] | None = None) -> pd.DataFrame:
    """Return per method: texts, % words masked, TRIR of each attack and the strongest, cap."""
    from intruder.analysis.risk_stats import percent_se

    rows = []
    for method, part in machine.groupby("method", sort=False):
        attacks = [c[: -len("_correct")] for c in part.columns if c.endswith("_correct")]
        row: dict[str, Any] = {
            "method": method,
            "label": (labels or {}).get(method, method),
            "n_texts": len(part),
            "pct_words_masked": 100.0 * part["masked_share"].astype(float).mean(),
        }
        for attack in attacks:
            outcomes = part[f"{attack}_correct"].fillna(False).astype(bool)
            row[f"trir_{attack}"] = 100.0 * outcomes.mean()
        strongest = part[f"{STRONGEST}_correct"].fillna(False).astype(bool)
        row[f"se_{STRONGEST}"] = percent_se(strongest)
        row["cap"] = 100.0 * part[f"{STRONGEST}_true_rank"].notna().mean()
        rows.append(row)
    table = pd.DataFrame(rows)
    if not table.empty:
        table = table.sort_values(f"trir_{STRONGEST}", ascending=False).reset_index(drop=True)
    return table


def agreement_table(per_text: pd.DataFrame, attacks: list[str]) -> tuple[pd.DataFrame, dict]:
    """Return kappa, McNemar and AUC per attack (and the strongest), and each ROC curve."""
    rows, curves = [], {}
    if per_text.empty:
        return pd.DataFrame(), curves
    human = per_text["human_majority_identified"].astype(bool).tolist()
    for attack in [*attacks, STRONGEST]:
        result: Agreement = agreement(
            human,
            per_text[f"{attack}_correct"].fillna(False).astype(bool).tolist(),
            per_text[f"{attack}_true_prob"].tolist(),
        )
        rows.append({"attack": attack, **result.to_dict()})
        if result.roc:
            curves[attack] = {**result.roc, "auc": result.auc}
    return pd.DataFrame(rows), curves


@dataclass
class RiskReport:
    """Every table of a human-vs-machine report, its statistics and its written summary."""

    settings: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    correlations: dict[str, Correlation] = field(default_factory=dict)
    roc: dict[str, dict[str, Any]] = field(default_factory=dict)
    paragraphs: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Return the headline numbers as JSON-able values."""
        from intruder.analysis.report import records

        trir: dict[str, dict[str, float]] = {}
        by_method = self.tables.get("trir_by_method")
        if by_method is not None:
            for row in records(by_method):
                trir[row["method"]] = {
                    c[len("trir_") :]: row[c] for c in row if c.startswith("trir_")
                }
                trir[row["method"]]["pct_words_masked"] = row["pct_words_masked"]
        agreement_rows = self.tables.get("agreement")
        return {
            "settings": self.settings,
            "trir": trir,
            "spearman": {k: v.to_dict() for k, v in self.correlations.items()},
            "agreement": records(agreement_rows) if agreement_rows is not None else [],
            "summary_text": self.paragraphs,
            "warnings": self.warnings,
        }


def build_report(
    results: pd.DataFrame,
    *,
    human_texts: pd.DataFrame | None = None,
    human_rates: pd.DataFrame | None = None,
    human_method: str | None = None,
    settings: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    seed: int = 0,
) -> RiskReport:
    """Build every table of the report from the attack results and the human results."""
    report = RiskReport(settings=dict(settings or {}))
    if results.empty:
        report.warnings.append("The attack run has no results yet.")
        return report
    attacks = attack_names(results)
    machine = machine_per_text(results)
    report.tables["trir_by_method"] = trir_by_method(machine, labels)
    if human_method is None:
        human_method = _default_human_method(machine, human_texts)
    report.settings["human_method"] = human_method
    if human_rates is None and human_texts is not None and not human_texts.empty:
        human_rates_target = human_rates_from_texts(human_texts, "target")
        human_rates_group = human_rates_from_texts(human_texts, "group")
    elif human_rates is not None:
        human_rates_target = human_rates
        human_rates_group = None
    else:
        human_rates_target = human_rates_group = None
        report.warnings.append("No intruder judgments yet: the report shows the machine side only.")
    report.tables["rates_group"] = rates_beside(machine, human_rates_group, human_method, "group")
    report.tables["rates_target"] = rates_beside(
        machine, human_rates_target, human_method, "target"
    )
    per_text = human_vs_machine_per_text(machine, human_texts)
    if not per_text.empty:
        report.tables["per_text"] = per_text
        table, curves = agreement_table(per_text, attacks)
        report.tables["agreement"] = table
        report.roc = curves
    report.tables["machine_per_text"] = machine
    target = report.tables["rates_target"]
    if "human_pct_identified" in target:
        for attack in [*attacks, STRONGEST]:
            report.correlations[attack] = spearman_with_ci(
                target["human_pct_identified"], target[f"trir_{attack}"], seed=seed
            )
    report.paragraphs = written_summary(report, human_method, labels or {})
    report.tables = {n: report.tables[n] for n in RISK_TABLE_TITLES if n in report.tables}
    return report


def _default_human_method(machine: pd.DataFrame, human_texts: pd.DataFrame | None) -> str:
    """Return the method intruders saw most; without judgments, the first stored method."""
    if human_texts is not None and not human_texts.empty:
        judged = human_texts[human_texts["n_judgments"] > 0]
        if not judged.empty:
            return str(judged["method"].value_counts().idxmax())
    methods = list(machine["method"].unique())
    stored = [m for m in methods if not is_baseline(m)]
    return (stored or methods)[0]


def _pct(value: Any) -> str:
    return "n/a" if value is None or pd.isna(value) else f"{value:.1f} %"


def written_summary(report: RiskReport, human_method: str, labels: dict[str, str]) -> list[str]:
    """Return a few sentences written from the numbers: who is at risk, and who sees more."""
    paragraphs = []
    target = report.tables.get("rates_target", pd.DataFrame())
    machine = report.tables["machine_per_text"]
    key = f"trir_{STRONGEST}"
    if not target.empty and key in target:
        top = target.sort_values(key, ascending=False).head(3)
        names = ", ".join(
            f"{r.target_name} ({_pct(getattr(r, key))} of {int(r.n_texts)} texts)"
            for r in top.itertuples()
        )
        seen = labels.get(human_method, human_method)
        paragraphs.append(f"Persons most at risk from the machine on the texts of {seen}: {names}.")
    served = machine[machine["method"] == human_method]
    hit = served[served[f"{STRONGEST}_correct"].fillna(False).astype(bool)]
    if len(served):
        worst = hit.sort_values(f"{STRONGEST}_true_prob", ascending=False).head(3)
        listed = ", ".join(
            f"{r.external_id} ({r.target_name}, by {r.strongest_attacks})"
            for r in worst.itertuples()
        )
        paragraphs.append(
            f"The strongest adversary re-identifies {len(hit)} of {len(served)} texts "
            f"({100 * len(hit) / len(served):.1f} %)"
            + (f"; the most confident: {listed}." if listed else ".")
        )
    if "human_pct_identified" in target and target["human_pct_identified"].notna().any():
        both = target.dropna(subset=["human_pct_identified", key])
        weights = both["n_texts"]
        human = float(np.average(both["human_pct_identified"], weights=weights))
        machine_rate = float(np.average(both[key], weights=weights))
        higher = sum(both[key] > both["human_pct_identified"])
        verdict = "overstates" if machine_rate > human else "understates"
        if abs(machine_rate - human) < 1:
            verdict = "matches"
        paragraphs.append(
            f"Over the {len(both)} persons with human results, the machine {verdict} human "
            f"risk: {machine_rate:.1f} % of texts re-identified by the strongest adversary vs "
            f"{human:.1f} % by intruders (weighted by texts per person); the machine is higher "
            f"for {higher} of {len(both)} persons."
        )
        correlation = report.correlations.get(STRONGEST)
        if correlation is not None and correlation.rho is not None:
            paragraphs.append(
                f"Per person, human and machine rates correlate with Spearman rho = "
                f"{correlation.rho:.2f} (95 % bootstrap CI {correlation.ci_low:.2f} to "
                f"{correlation.ci_high:.2f}, n = {correlation.n})."
            )
    agreement_rows = report.tables.get("agreement")
    if agreement_rows is not None and not agreement_rows.empty:
        row = agreement_rows[agreement_rows["attack"] == STRONGEST].iloc[0]
        paragraphs.append(
            f"Per text (strongest adversary vs a majority of intruders, n = {row['n']}): "
            f"kappa = {_fmt(row['kappa'])}, McNemar p = {_fmt(row['mcnemar_p'], 3)}, "
            f"AUC of the machine's probability = {_fmt(row['auc'])}; "
            f"{row['machine_only']} texts only the machine identified, "
            f"{row['human_only']} only humans."
        )
    by_method = report.tables.get("trir_by_method")
    if by_method is not None and len(by_method) > 1:
        pieces = [
            f"{r.label}: {_pct(getattr(r, key))} at {_pct(r.pct_words_masked)} words masked"
            for r in by_method.itertuples()
        ]
        stored = by_method[~by_method["method"].map(is_baseline)]
        best = stored.sort_values(key).iloc[0] if len(stored) else None
        text = "TRIR of the strongest adversary per method: " + "; ".join(pieces) + "."
        if best is not None and len(stored) > 1:
            runner_up = stored.sort_values(key).iloc[1]
            gap = float(runner_up[key] - best[key])
            se = float(np.nan_to_num(best.get(f"se_{STRONGEST}", np.nan)))
            if gap > 2 * se:
                text += f" Of the study's methods, {best['label']} leaves the least machine risk."
            else:
                text += (
                    f" The study's methods leave about the same machine risk ({gap:.1f} "
                    f"points apart, within 2 SE = {2 * se:.1f})."
                )
        paragraphs.append(text)
    return paragraphs


def _fmt(value: Any, digits: int = 2) -> str:
    return "undefined" if value is None or pd.isna(value) else f"{value:.{digits}f}"

"""The human-vs-machine risk report: tables, statistics and a summary written from the numbers.

Django-free: it takes tidy frames (`intruder.risk.selectors` builds them from the database,
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
by the strongest adversary when any attack does (`attacks.strongest`). A text counts as
identified by humans under ONE rule per study (`IDENTIFIED_RULES`, `human_outcomes`), used by
every table, plot, statistic and export; the `sensitivity` table shows the headline under
every rule. Machine rates beside human rates are computed on exactly the judged texts; the
texts of that method nobody judged (drafts, unserved) are in the `coverage` table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from attacks.strongest import STRONGEST
from intruder.risk.frontier import FRONTIER_NOTE, FRONTIER_TITLE, frontier_table
from intruder.risk.methods import is_baseline
from intruder.risk.predicted import validation_text
from intruder.risk.rules import DEFAULT_RULE, IDENTIFIED_RULES
from intruder.risk.stats import (
    NOT_ENOUGH,
    Agreement,
    Correlation,
    Rate,
    agreement,
    outcome_rate,
    p_text,
    spearman_with_ci,
    strongest_null,
    wilson,
)

GROUP_ORDER = {"famous": 0, "semifamous": 1, "fictitious": 2}
KEYS = {"target": ["group", "target_key", "target_name"], "group": ["group"]}

RISK_TABLE_TITLES: dict[str, str] = {
    "trir_by_method": "TRIR per method and attack, with the share of words masked",
    "frontier": FRONTIER_TITLE,
    "rates_group": "Per group: humans beside each attack and the strongest adversary",
    "rates_target": "Per person: humans beside each attack and the strongest adversary",
    "sensitivity": "The headline under each definition of 'identified by humans', with all "
    "judgments and with flagged judgments excluded",
    "coverage": "Texts humans judged and texts they did not (drafts, unserved)",
    "open_world": "Open-world ladder: TRIR against the number of candidates N, with chance 1/N",
    "knowledge_budget": "Knowledge-budget ladder: each attack's TRIR and per-person rho as the "
    "attacker knows each candidate through b descriptions",
    "llm_intruder": "Open-world LLM intruder beside the human intruders: no candidate list, one "
    "name per text, scored like a human guess",
    "familiarity_split": "Per famous person: the human rate split into familiarity (intruders "
    "who had heard of the person, measured on the debrief) x identified-given-familiar",
    "predicted_group": "Predicted human risk per group (machine evidence model), beside humans",
    "predicted_target": "Predicted human risk per person (machine evidence model), beside humans",
    "agreement": "Per-text agreement of humans and machine (kappa, McNemar, AUC)",
    "per_text": "Per text: human results beside each attack",
    "machine_per_text": "Per text and method: every attack's outcome (all methods)",
}


def attack_names(results: pd.DataFrame) -> list[str]:
    """Return the attacks in the results, in a stable order."""
    return sorted(results["attack"].unique()) if not results.empty else []


def machine_attacks(machine: pd.DataFrame) -> list[str]:
    """Return the attack columns of a machine frame, the strongest last."""
    names = [c[: -len("_correct")] for c in machine.columns if c.endswith("_correct")]
    return [n for n in names if n != STRONGEST] + ([STRONGEST] if STRONGEST in names else [])


def machine_per_text(results: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (description, method): each attack's outcome and the strongest's."""
    keys = ["description_id", "method", "external_id", "group", "target_key", "target_name"]
    if results.empty:
        return pd.DataFrame(columns=[*keys, "masked_share"])
    frame = results.copy()
    frame["correct"] = frame["true_rank"] == 1
    wide = frame.pivot(index=keys, columns="attack", values=["correct", "true_rank", "true_prob"])
    wide.columns = [f"{attack}_{value}" for value, attack in wide.columns]
    wide = wide.reset_index()
    chosen, hits = _strongest(frame)
    best = frame.loc[chosen, ["description_id", "method", "true_rank", "true_prob", "masked_share"]]
    best = best.rename(
        columns={"true_rank": f"{STRONGEST}_true_rank", "true_prob": f"{STRONGEST}_true_prob"}
    )
    best[f"{STRONGEST}_correct"] = best[f"{STRONGEST}_true_rank"] == 1
    table = wide.merge(best, on=["description_id", "method"]).merge(
        hits, on=["description_id", "method"], how="left"
    )
    table[f"{STRONGEST}_attacks"] = table[f"{STRONGEST}_attacks"].fillna("")
    for attack in [*attack_names(results), STRONGEST]:
        column = f"{attack}_correct"
        if column in table:
            table[column] = table[column].astype("boolean")
    table["_order"] = table["group"].map(GROUP_ORDER).fillna(9)
    table = table.sort_values(["method", "_order", "target_name", "description_id"])
    return table.drop(columns="_order").reset_index(drop=True)


def _strongest(frame: pd.DataFrame) -> tuple[list[Any], pd.DataFrame]:
    """Return the rows of the strongest adversary per (description, method), and its hits.

    Both come from `attacks.strongest`, the one definition the attack runs' TRIR table and
    the `attacks` CLI use too: the attack that ranks the true person best (then the higher
    probability of the true person), and the attacks that rank the true person first.
    """
    from attacks.prediction import Prediction
    from attacks.strongest import reidentified_by, strongest_adversary

    chosen: list[Any] = []
    hits: list[tuple[Any, Any, str]] = []
    columns = ["attack", "description_id", "target_key", "true_rank", "true_prob"]
    for method, part in frame.groupby("method", sort=False):
        row_of: dict[int, Any] = {}
        description_of: dict[str, Any] = {}
        by_attack: dict[str, list[Prediction]] = {}
        for index, (attack, description, key, rank, prob) in zip(
            part.index, part[columns].itertuples(index=False, name=None), strict=True
        ):
            true_rank = None if pd.isna(rank) else int(rank)
            prediction = Prediction(
                doc_id=str(description),
                true_name=str(key),
                # The stored rank is the outcome: first rank = the true person predicted.
                predicted_name=str(key) if true_rank == 1 else "",
                true_rank=true_rank,
                true_prob=None if pd.isna(prob) else float(prob),
            )
            row_of[id(prediction)] = index
            description_of[prediction.doc_id] = description
            by_attack.setdefault(str(attack), []).append(prediction)
        chosen += [row_of[id(p)] for p in strongest_adversary(by_attack)]
        hits += [
            (description_of[doc], method, "+".join(names))
            for doc, names in reidentified_by(by_attack).items()
            if names
        ]
    table = pd.DataFrame(hits, columns=["description_id", "method", f"{STRONGEST}_attacks"])
    dtypes = {c: frame[c].dtype for c in ("description_id", "method")}
    return chosen, table.astype(dtypes)


def human_outcomes(human_texts: pd.DataFrame | None, rule: str = DEFAULT_RULE) -> pd.DataFrame:
    """Return the judged texts with `human_identified` under `rule`: the one home of the rule.

    Every human rate, table, plot and statistic of the report comes from this frame; pass
    it a per-text frame built from any subset of judgments (e.g. without flagged ones).
    """
    if rule not in IDENTIFIED_RULES:
        raise ValueError(f"unknown rule {rule!r}; one of {', '.join(IDENTIFIED_RULES)}")
    if human_texts is None or human_texts.empty:
        return pd.DataFrame()
    judged = human_texts[human_texts["n_judgments"] > 0].copy()
    share = judged["pct_judgments_identified"].astype(float)
    if rule == "mean_cosine":
        identified = judged["identified"].fillna(False).astype(bool)
    elif rule == "majority":
        identified = share > 50
    else:
        identified = share > 0
    judged["human_identified"] = identified.to_numpy(dtype=bool)
    return judged.reset_index(drop=True)


def human_vs_machine_per_text(machine: pd.DataFrame, outcomes: pd.DataFrame) -> pd.DataFrame:
    """Return the judged texts with their human results beside every attack's outcome."""
    if outcomes is None or outcomes.empty or machine.empty:
        return pd.DataFrame()
    columns = [
        "text_id",
        "description_id",
        "method",
        "n_judgments",
        "pct_judgments_identified",
        "mean_cosine",
        "human_identified",
    ]
    return outcomes[columns].merge(machine, on=["description_id", "method"], how="inner")


def _rate_columns(prefix: str, rate: Rate, pct_name: str) -> dict[str, Any]:
    return {pct_name: rate.pct, f"{prefix}ci_low": rate.ci_low, f"{prefix}ci_high": rate.ci_high}


def human_rates_from_outcomes(outcomes: pd.DataFrame, by: str) -> pd.DataFrame:
    """Return per person or group: judged texts, % identified (the study's rule), Wilson CI."""
    keys = KEYS[by]
    columns = [*keys, "human_n", "human_pct_identified", "human_ci_low", "human_ci_high"]
    rows = []
    for key, part in outcomes.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        rate = outcome_rate(part["human_identified"])
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "human_n": rate.n,
                **_rate_columns("human_", rate, "human_pct_identified"),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def machine_rates(machine: pd.DataFrame, method: str, by: str) -> pd.DataFrame:
    """Return per person or group, for one method: n texts, TRIR and Wilson CI of each attack."""
    keys = KEYS[by]
    part = machine[machine["method"] == method]
    attacks = machine_attacks(part)
    rows = []
    for key, texts in part.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = {**dict(zip(keys, key, strict=True)), "n_texts": len(texts)}
        for attack in attacks:
            rate = outcome_rate(texts[f"{attack}_correct"])
            row.update(_rate_columns(f"{attack}_", rate, f"trir_{attack}"))
        rows.append(row)
    return pd.DataFrame(rows)


def rates_beside(
    machine: pd.DataFrame, human_rates: pd.DataFrame | None, method: str, by: str
) -> pd.DataFrame:
    """Return human rates beside the machine's for the method humans saw (the same texts)."""
    table = machine_rates(machine, method, by)
    if human_rates is not None and not human_rates.empty and not table.empty:
        on = ["group", "target_key"] if by == "target" else ["group"]
        human = human_rates.drop(columns=[c for c in ("target_name",) if by == "target"])
        table = (
            human.merge(table, on=on, how="outer")
            if by == "group"
            else table.merge(human, on=on, how="left")
        )
        front = [*KEYS[by], "human_n", "human_pct_identified", "human_ci_low", "human_ci_high"]
        front = [c for c in front if c in table]
        table = table[[*front, *[c for c in table.columns if c not in front]]]
    if not table.empty:
        table["_order"] = table["group"].map(GROUP_ORDER).fillna(9)
        table = table.sort_values(["_order", *KEYS[by][1:]]).drop(columns="_order")
    return table.reset_index(drop=True)


def published_rates_with_ci(human_rates: pd.DataFrame, machine: pd.DataFrame, method: str):
    """Return published per-person rates with a Wilson CI over the person's texts of `method`.

    Published rates carry no per-text data: n is the number of the person's texts in the
    study (every text was judged) and k the rounded rate times n.
    """
    counts = machine[machine["method"] == method].groupby("target_key").size()
    table = human_rates.copy()
    rows = []
    for row in table.itertuples():
        n = int(counts.get(row.target_key, 0))
        k = round(float(row.human_pct_identified) * n / 100)
        rate = wilson(k, n)
        rows.append((n, rate.ci_low, rate.ci_high))
    table["human_n"] = [r[0] for r in rows]
    table["human_ci_low"] = [r[1] for r in rows]
    table["human_ci_high"] = [r[2] for r in rows]
    return table.drop(columns=[c for c in ("human_se",) if c in table])


def trir_by_method(machine: pd.DataFrame, labels: dict[str, str] | None = None) -> pd.DataFrame:
    """Return per method: texts, % words masked, TRIR of each attack and the strongest, cap."""
    rows = []
    for method, part in machine.groupby("method", sort=False):
        row: dict[str, Any] = {
            "method": method,
            "label": (labels or {}).get(method, method),
            "n_texts": len(part),
            "pct_words_masked": 100.0 * part["masked_share"].astype(float).mean(),
        }
        for attack in machine_attacks(part):
            rate = outcome_rate(part[f"{attack}_correct"])
            row.update(_rate_columns(f"{attack}_", rate, f"trir_{attack}"))
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
    human = per_text["human_identified"].astype(bool).tolist()
    for attack in [*attacks, STRONGEST]:
        result: Agreement = agreement(
            human,
            per_text[f"{attack}_correct"].fillna(False).astype(bool).tolist(),
            per_text[f"{attack}_true_prob"].tolist(),
            persons=per_text["target_key"].tolist(),
        )
        rows.append({"attack": attack, **result.to_dict()})
        if result.roc:
            curves[attack] = {**result.roc, "auc": result.auc}
    return pd.DataFrame(rows), curves


def person_correlations(target: pd.DataFrame, attacks: list[str]) -> dict[str, Correlation]:
    """Return Spearman's rho of per-person human and machine rates, per attack and strongest."""
    if "human_pct_identified" not in target:
        return {}
    return {
        attack: spearman_with_ci(target["human_pct_identified"], target[f"trir_{attack}"])
        for attack in [*attacks, STRONGEST]
        if f"trir_{attack}" in target
    }


def coverage_table(machine: pd.DataFrame, outcomes: pd.DataFrame, method: str) -> pd.DataFrame:
    """Return the strongest adversary's TRIR on the judged texts and on the rest of `method`."""
    part = machine[machine["method"] == method]
    judged_ids = set(outcomes["description_id"]) if not outcomes.empty else set()
    judged = part["description_id"].isin(judged_ids)
    rows = []
    for label, texts in (
        ("judged by humans", part[judged]),
        ("not judged (drafts, unserved)", part[~judged]),
    ):
        rate = outcome_rate(texts[f"{STRONGEST}_correct"])
        rows.append(
            {
                "texts": label,
                "n_texts": rate.n,
                **_rate_columns(f"{STRONGEST}_", rate, f"trir_{STRONGEST}"),
            }
        )
    return pd.DataFrame(rows)


@dataclass
class RiskReport:
    """Every table of a human-vs-machine report, its statistics and its written summary."""

    settings: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    correlations: dict[str, Correlation] = field(default_factory=dict)
    roc: dict[str, dict[str, Any]] = field(default_factory=dict)
    paragraphs: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    threat_model: dict[str, Any] = field(default_factory=dict)
    headline: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    # Per method, the permutation null (`strongest_null`), computed once: the threat model
    # and the frontier read it here, so a chance level has one value in every form.
    chance: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Per table, the sentence that explains it, shown beside the table in every form.
    notes: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Return the headline numbers as JSON-able values."""
        from intruder.analysis.report import records

        trir: dict[str, dict[str, Any]] = {}
        by_method = self.tables.get("trir_by_method")
        if by_method is not None:
            for row in records(by_method):
                trir[row["method"]] = {
                    c[len("trir_") :]: row[c] for c in row if c.startswith("trir_")
                }
                trir[row["method"]]["n_texts"] = row["n_texts"]
                trir[row["method"]]["pct_words_masked"] = row["pct_words_masked"]
        agreement_rows = self.tables.get("agreement")
        sensitivity = self.tables.get("sensitivity")
        return {
            "provenance": self.provenance,
            "threat_model": self.threat_model,
            "settings": self.settings,
            "headline": self.headline,
            "trir": trir,
            "spearman": {k: v.to_dict() for k, v in self.correlations.items()},
            "agreement": records(agreement_rows) if agreement_rows is not None else [],
            "sensitivity": records(sensitivity) if sensitivity is not None else [],
            "summary_text": self.paragraphs,
            "table_notes": self.notes,
            "warnings": self.warnings,
        }


def _headline(machine: pd.DataFrame, outcomes: pd.DataFrame, method: str) -> dict[str, Any]:
    """Return the human and strongest-adversary rates on exactly the judged texts."""
    judged = machine[machine["method"] == method].merge(
        outcomes[["description_id", "method", "human_identified"]],
        on=["description_id", "method"],
        how="inner",
    )
    return {
        "n_texts": len(judged),
        "persons": int(judged["target_key"].nunique()) if len(judged) else 0,
        "human": outcome_rate(judged["human_identified"]).to_dict(),
        "machine": {
            attack: outcome_rate(judged[f"{attack}_correct"]).to_dict()
            for attack in machine_attacks(judged)
        },
    }


JUDGMENTS_ALL = "all"
JUDGMENTS_KEPT = "flagged excluded"


def sensitivity_table(
    machine: pd.DataFrame,
    human_texts: pd.DataFrame,
    method: str,
    rule: str,
    kept_texts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Return the headline (rates, kappa, rho of the strongest) under every rule.

    With `kept_texts` (the per-text frame of the judgments the study's exclusion rules keep),
    each rule appears twice: with all judgments and with flagged judgments excluded.
    """
    variants = [(JUDGMENTS_ALL, human_texts)]
    if kept_texts is not None:
        variants.append((JUDGMENTS_KEPT, kept_texts))
    return pd.DataFrame(
        [
            {"judgments": label, **row}
            for label, texts in variants
            for row in _sensitivity_rows(machine, texts, method, rule)
        ]
    )


def _sensitivity_rows(
    machine: pd.DataFrame, human_texts: pd.DataFrame, method: str, rule: str
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in IDENTIFIED_RULES:
        outcomes = human_outcomes(human_texts, name)
        if outcomes.empty:
            rows.append({"rule": name, "chosen": name == rule, "n_texts": 0})
            continue
        outcomes = outcomes[outcomes["method"] == method]
        head = _headline(machine, outcomes, method)
        per_text = human_vs_machine_per_text(machine, outcomes)
        # The strongest adversary's kappa only (no AUC): the table shows nothing else.
        paired = (
            agreement(
                per_text["human_identified"].astype(bool).tolist(),
                per_text[f"{STRONGEST}_correct"].fillna(False).astype(bool).tolist(),
                persons=per_text["target_key"].tolist(),
            )
            if not per_text.empty
            else None
        )
        # Machine rates on exactly the judged texts, as in the report's per-person table.
        judged = machine[
            (machine["method"] == method)
            & machine["description_id"].isin(set(outcomes["description_id"]))
        ]
        target = rates_beside(
            judged, human_rates_from_outcomes(outcomes, "target"), method, "target"
        )
        rho = spearman_with_ci(target["human_pct_identified"], target[f"trir_{STRONGEST}"])
        human, strongest = head["human"], head["machine"][STRONGEST]
        rows.append(
            {
                "rule": name,
                "chosen": name == rule,
                "n_texts": head["n_texts"],
                "human_identified": human["k"],
                "human_pct_identified": human["pct"],
                "human_ci_low": human["ci_low"],
                "human_ci_high": human["ci_high"],
                f"trir_{STRONGEST}": strongest["pct"],
                f"{STRONGEST}_ci_low": strongest["ci_low"],
                f"{STRONGEST}_ci_high": strongest["ci_high"],
                "kappa": None if paired is None else paired.kappa,
                "kappa_ci_low": None if paired is None else paired.kappa_ci_low,
                "kappa_ci_high": None if paired is None else paired.kappa_ci_high,
                "kappa_note": "" if paired is None else paired.note,
                **_rho_columns(rho),
            }
        )
    return rows


def _rho_columns(rho: Correlation) -> dict[str, Any]:
    return {
        "persons": rho.n,
        "rho": rho.rho,
        "rho_ci_low": rho.ci_low,
        "rho_ci_high": rho.ci_high,
        "rho_p": rho.p,
        "rho_note": rho.note,
    }


def _reuse_headline_rho(sensitivity: pd.DataFrame, headline: Correlation) -> None:
    """Put the summary's rho into the sensitivity table's chosen row with all judgments.

    Both are computed from the same per-person table; copying the one object makes "one
    statistic, one value" hold by construction rather than by two computations agreeing.
    """
    chosen = sensitivity["chosen"].astype(bool) & (sensitivity["judgments"] == JUDGMENTS_ALL)
    for column, value in _rho_columns(headline).items():
        sensitivity[column] = sensitivity[column].astype(object)
        sensitivity.loc[chosen, column] = value


def build_report(
    results: pd.DataFrame,
    *,
    human_texts: pd.DataFrame | None = None,
    human_rates: pd.DataFrame | None = None,
    human_method: str | None = None,
    rule: str = DEFAULT_RULE,
    settings: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    human_side: dict[str, Any] | None = None,
    machine_side: dict[str, Any] | None = None,
    provenance: dict[str, Any] | None = None,
    calibration: Any = None,
    seed: int = 0,
    kept_texts: pd.DataFrame | None = None,
    llm_rows: list[dict[str, Any]] | None = None,
    tpi: dict[str, Any] | None = None,
    familiarity_split: pd.DataFrame | None = None,
    measured_familiarity: dict[str, float] | None = None,
) -> RiskReport:
    """Build every table of the report from the attack results and the human results.

    familiarity_split / measured_familiarity: where the study asked the familiarity question
    (`intruder.risk.familiarity`): the split table, and person -> share who had heard of them,
    which the predicted-human model then uses instead of the declared constant.

    kept_texts: the per-text human results without the judgments the study's exclusion
    rules drop (flags); the sensitivity table then shows every rule with and without them.
    llm_rows: the open-world LLM intruder's scored guesses (`llm_intruder_table`).
    tpi: the run's stored TPI (`metric`, `ic_source`, `methods`: method -> %): the frontier.

    human_side / machine_side: what the caller knows of each threat model (instructions,
    intruders, candidate set, background); the report adds what it derives from the data.
    """
    report = RiskReport(settings=dict(settings or {}), provenance=dict(provenance or {}))
    report.settings["identified_rule"] = rule
    report.settings["identified_rule_text"] = IDENTIFIED_RULES[rule]
    if results.empty:
        report.warnings.append("The attack run has no results yet.")
        return report
    attacks = attack_names(results)
    machine = machine_per_text(results)
    report.tables["trir_by_method"] = trir_by_method(machine, labels)
    report.chance = {
        str(m): strongest_null(results, m, seed=seed) for m in machine["method"].unique()
    }
    if tpi is not None:
        report.tables["frontier"] = frontier_table(
            report.tables["trir_by_method"], tpi.get("methods") or {}, report.chance
        )
        report.settings["tpi"] = {
            "metric": tpi.get("metric", "TPI"),
            "ic_source": tpi.get("ic_source"),
            "computed": bool(tpi.get("methods")),
        }
    if human_method is None:
        human_method = _default_human_method(machine, human_texts)
    if human_method not in report.chance:
        # Intruders judged a method this run did not attack (e.g. a run of the clear text
        # only): nothing to set beside them, so the report is the machine side's.
        seen = (labels or {}).get(human_method, human_method)
        report.warnings.append(
            f"Intruders judged the texts of {seen}, which this run did not attack: the report "
            f"shows the machine side only. Start a run that includes {seen} to compare."
        )
        human_texts = kept_texts = human_rates = None
        human_method = _default_human_method(machine, None)
        warned = True
    else:
        warned = False
    report.settings["human_method"] = human_method
    outcomes = human_outcomes(human_texts, rule)
    if not outcomes.empty:
        outcomes = outcomes[outcomes["method"] == human_method]
    if not outcomes.empty:
        # Machine rates beside human rates: on exactly the texts humans judged.
        judged = machine[
            (machine["method"] != human_method)
            | machine["description_id"].isin(set(outcomes["description_id"]))
        ]
        human_rates_target = human_rates_from_outcomes(outcomes, "target")
        human_rates_group = human_rates_from_outcomes(outcomes, "group")
    elif human_rates is not None:
        judged = machine
        human_rates_target = published_rates_with_ci(human_rates, machine, human_method)
        human_rates_group = None
    else:
        judged = machine
        human_rates_target = human_rates_group = None
        if not warned:
            report.warnings.append(
                "No intruder judgments yet: the report shows the machine side only."
            )
    report.tables["rates_group"] = rates_beside(judged, human_rates_group, human_method, "group")
    report.tables["rates_target"] = rates_beside(judged, human_rates_target, human_method, "target")
    if not outcomes.empty:
        report.tables["sensitivity"] = sensitivity_table(
            machine, human_texts, human_method, rule, kept_texts
        )
        report.tables["coverage"] = coverage_table(machine, outcomes, human_method)
        report.headline = _headline(machine, outcomes, human_method)
    elif human_rates is not None:
        report.headline = _published_headline(report.tables["rates_target"], machine, human_method)
    per_text = human_vs_machine_per_text(machine, outcomes)
    if not per_text.empty:
        report.tables["per_text"] = per_text
        table, curves = agreement_table(per_text, attacks)
        report.tables["agreement"] = table
        report.roc = curves
    if llm_rows:
        report.tables["llm_intruder"] = llm_intruder_table(llm_rows, outcomes, human_method)
    report.tables["machine_per_text"] = machine
    if familiarity_split is not None and not familiarity_split.empty:
        report.tables["familiarity_split"] = familiarity_split
    report.correlations = person_correlations(report.tables["rates_target"], attacks)
    if "sensitivity" in report.tables and STRONGEST in report.correlations:
        # The chosen rule with all judgments is the headline: its rho is the summary's.
        _reuse_headline_rho(report.tables["sensitivity"], report.correlations[STRONGEST])
    report.threat_model = threat_models(
        results,
        outcomes,
        rule,
        report.settings,
        human_side,
        machine_side,
        report.chance.get(human_method, {}),
    )
    predicted, why_not = predicted_human_tables(
        judged,
        human_method,
        calibration,
        int(report.threat_model["machine"]["candidates"]),
        human_rates_target,
        human_rates_group,
        measured_familiarity,
    )
    report.tables.update(predicted)
    if predicted and measured_familiarity:
        report.settings["predicted_familiarity"] = (
            f"familiarity measured for {len(measured_familiarity)} person(s) (the debrief's "
            "familiarity question), declared for the others"
        )
    report.settings["predicted_human"] = (
        validation_text(calibration) if predicted else f"not shown: {why_not}"
    )
    # Every table file says whether the human data behind it are real (`rendering`).
    report.settings["human_data_simulated"] = bool((human_side or {}).get("simulated_intruders"))
    report.notes = table_notes(report, simulated=report.settings["human_data_simulated"])
    report.paragraphs = written_summary(report, human_method, labels or {})
    report.tables = {n: report.tables[n] for n in RISK_TABLE_TITLES if n in report.tables}
    return report


# The open-world ladder's one sentence (docs/risk.md says the same): every form shows it.
OPEN_WORLD_NOTE = (
    "Each row is one attack run with a wider candidate list (the study's persons plus "
    "distractors), so chance 1/N falls as N grows. A closed-world TRIR bounds from above what "
    "an attacker without a candidate list achieves; it is not a human rate, which is open "
    "world (intruders name anyone they can think of)."
)
PER_TEXT_NOTE = (
    "human_identified is the study's one rule ({rule}); pct_judgments_identified is the share "
    "of judgments that named the person, shown for reference only, so a text can have most "
    "judgments correct and still read not identified when the rule is about the judgments' "
    "mean name similarity."
)
SENSITIVITY_NOTE = (
    "The chosen rule's row with all judgments is the headline (the same rho and rates as the "
    "summary). Where a statistic is below its minimum sample, its note column says what it "
    "needs."
)


# The familiarity split's one sentence: every form shows it beside the table.
FAMILIARITY_NOTE = (
    "Over the judgments of intruders who answered the debrief's familiarity question: "
    "human rate = familiarity x identified-given-familiar + (1 - familiarity) x "
    "identified-given-unfamiliar, each a share with its Wilson interval. Familiarity is "
    "measured, asked after the intruder's last answer was locked."
)


def table_notes(report: RiskReport, *, simulated: bool) -> dict[str, str]:
    """Return the sentence that explains each table that needs one (shown in every form)."""
    notes = {
        "open_world": OPEN_WORLD_NOTE,
        "knowledge_budget": KNOWLEDGE_NOTE,
        "sensitivity": SENSITIVITY_NOTE,
        "per_text": PER_TEXT_NOTE.format(rule=report.settings["identified_rule_text"]),
        "frontier": FRONTIER_NOTE,
    }
    if "familiarity_split" in report.tables:
        notes["familiarity_split"] = FAMILIARITY_NOTE + (
            " These answers are SIMULATED by the demo, not people's." if simulated else ""
        )
    predicted = report.settings.get("predicted_human", "")
    for name in ("predicted_group", "predicted_target"):
        if name in report.tables:
            notes[name] = (
                f"predicted_pct is a model's prediction from the machine's evidence, not a "
                f"measurement. {predicted} The human columns are this study's intruders"
                + (", SIMULATED by the demo, not people." if simulated else ".")
            )
    return notes


KNOWLEDGE_NOTE = (
    "Each row is one finished attack run of the study: b is how many descriptions the attacker "
    "knows per candidate, drawn at random (all = every description outside the fold, the "
    "k-fold run); TRIR is the mean over the run's resamples with a Wilson interval over its "
    "texts, rho the Spearman correlation of each person's machine rate with the human rate "
    "(Fisher interval). They are machine rates at a stated knowledge budget, not human rates."
)


def knowledge_budget_table(
    runs: list[tuple[dict[str, Any], pd.DataFrame]],
    method: str,
    judged: set[Any] | None,
    human_target: pd.DataFrame | None,
) -> pd.DataFrame:
    """Return one row per run and attack: b, TRIR over resamples (Wilson CI), per-person rho.

    Empty unless a run has a knowledge budget. runs: (machine side, results) of the study's
    finished cross-validated runs; rates on the texts of `method` (judged ones where any).
    """
    if not any(side.get("knowledge_budget") for side, _ in runs):
        return pd.DataFrame()
    human: dict[str, float] = {}
    if human_target is not None and "human_pct_identified" in human_target:
        known = human_target.dropna(subset=["human_pct_identified"])
        human = dict(zip(known["target_key"], known["human_pct_identified"], strict=True))
    rows = []
    for side, results in runs:
        part = results[results["method"] == method]
        if judged:
            part = part[part["description_id"].isin(judged)]
        if part.empty:
            continue
        budget = side.get("knowledge_budget")
        hits = part["hit_share"] if budget else (part["true_rank"] == 1)
        part = part.assign(hit=hits.astype(float).fillna(0.0))
        for attack, mine in part.groupby("attack"):
            rate = wilson(round(float(mine["hit"].sum())), len(mine))
            per_person = mine.groupby("target_key")["hit"].mean() * 100
            keys = [k for k in per_person.index if k in human]
            rho = spearman_with_ci([human[k] for k in keys], [per_person[k] for k in keys])
            rows.append(
                {
                    "run": side.get("run"),
                    "knowledge_budget": str(budget) if budget else "all",
                    "resamples": side.get("budget_resamples") or 1,
                    "attack": attack,
                    "n_texts": len(mine),
                    **_rate_columns("trir_", rate, "trir"),
                    **_rho_columns(rho),
                }
            )
    table = pd.DataFrame(rows)
    order = table["knowledge_budget"].map(lambda b: float("inf") if b == "all" else int(b))
    return table.assign(_order=order).sort_values(["_order", "attack"]).drop(columns="_order")


def open_world_table(
    runs: list[tuple[dict[str, Any], pd.DataFrame]],
    method: str,
    judged: set[Any] | None,
    human: dict[str, Any] | None,
) -> pd.DataFrame:
    """Return one row per run: N candidates, chance 1/N and each attack's TRIR (Wilson CI).

    runs: (machine side, results) of the study's finished runs; rates on the texts of
    `method`, restricted to the judged ones where humans judged any, beside the human rate.
    """
    rows = []
    for side, results in runs:
        machine = machine_per_text(results)
        part = machine[machine["method"] == method]
        if judged:
            part = part[part["description_id"].isin(judged)]
        if part.empty:
            continue
        n = int(side.get("candidates") or results["target_key"].nunique())
        row: dict[str, Any] = {
            "run": side.get("run"),
            "candidates": n,
            "distractors": side.get("distractors", 0),
            "chance_pct": 100.0 / n,
            "n_texts": len(part),
        }
        for attack in machine_attacks(part):
            rate = outcome_rate(part[f"{attack}_correct"])
            row.update(_rate_columns(f"{attack}_", rate, f"trir_{attack}"))
        if human and human.get("pct") is not None:
            row["human_pct_identified"] = human["pct"]
            row["human_ci_low"], row["human_ci_high"] = human["ci_low"], human["ci_high"]
        rows.append(row)
    table = pd.DataFrame(rows)
    return table.sort_values(["candidates", "run"]).reset_index(drop=True) if rows else table


def predicted_human_tables(
    machine: pd.DataFrame,
    method: str,
    calibration: Any,
    candidates: int,
    human_target: pd.DataFrame | None,
    human_group: pd.DataFrame | None,
    measured_familiarity: dict[str, float] | None = None,
) -> tuple[dict[str, pd.DataFrame], str]:
    """Return the predicted human rate per person and group (with intervals), or why not.

    The calibration was fitted on evidence at about `calibration.n_candidates` candidates;
    reciprocal ranks shrink as N grows, so it applies only to runs with N within a factor 2.
    """
    from intruder.risk.predicted import predict_with_intervals, text_evidence

    if calibration is None:
        return {}, "no calibration shipped"
    missing = [a for a in calibration.attacks if f"{a}_true_rank" not in machine]
    if missing:
        return {}, f"the calibration needs the attacks {', '.join(calibration.attacks)}"
    fitted_n = calibration.n_candidates or candidates
    if not fitted_n / 2 <= candidates <= fitted_n * 2:
        return {}, (
            f"the calibration was fitted at N = {fitted_n} candidates and this run has "
            f"N = {candidates}: add a distractor population of about {fitted_n} persons"
        )
    part = machine[machine["method"] == method].copy()
    part["evidence"] = text_evidence(part, calibration.attacks).to_numpy()
    if measured_familiarity:
        part["measured_familiarity"] = part["target_key"].map(measured_familiarity).astype(float)
    tables = {}
    for by, human in (("target", human_target), ("group", human_group)):
        table = predict_with_intervals(calibration, part, KEYS[by])
        if human is not None and not human.empty:
            on = KEYS[by] if by == "group" else ["group", "target_key"]
            keep = [*on, "human_n", "human_pct_identified", "human_ci_low", "human_ci_high"]
            table = table.merge(human[[c for c in keep if c in human]], on=on, how="left")
        tables[f"predicted_{by}"] = table
    return tables, ""


def _published_headline(target: pd.DataFrame, machine: pd.DataFrame, method: str) -> dict:
    """Return the headline of published per-person rates (k rebuilt from rate times n)."""
    part = machine[machine["method"] == method]
    k = round((target["human_pct_identified"] * target["human_n"] / 100).sum())
    n = int(target["human_n"].sum())
    return {
        "n_texts": len(part),
        "persons": int(part["target_key"].nunique()),
        "human": wilson(k, n).to_dict(),
        "machine": {a: outcome_rate(part[f"{a}_correct"]).to_dict() for a in machine_attacks(part)},
    }


def threat_models(
    results: pd.DataFrame,
    outcomes: pd.DataFrame,
    rule: str,
    settings: dict[str, Any],
    human_side: dict[str, Any] | None,
    machine_side: dict[str, Any] | None,
    chance: dict[str, Any],
) -> dict[str, Any]:
    """Return what each side knew and could do: the assumptions of every comparison."""
    human: dict[str, Any] = {
        "world": "open: intruders name anyone they can think of, with no candidate list",
        "candidate_list": None,
        "identified_rule": rule,
        "identified_rule_text": IDENTIFIED_RULES[rule],
        "threshold": settings.get("identification_threshold"),
        "texts_judged": len(outcomes) if not outcomes.empty else None,
        **(human_side or {}),
    }
    if not outcomes.empty:
        per_text = outcomes["n_judgments"].astype(int)
        human["judgments"] = int(per_text.sum())
        human["judgments_per_text"] = {
            "mean": float(per_text.mean()),
            "min": int(per_text.min()),
            "max": int(per_text.max()),
        }
    persons = int(results["target_key"].nunique())
    machine: dict[str, Any] = {
        "world": "closed: every attack chooses among the candidate persons only",
        "attacks": attack_names(results),
        "rule": "an attack identifies a text when it ranks the true person first; the "
        "strongest adversary when any attack does",
        "background": settings.get("background"),
        "folds": settings.get("k"),
        **(machine_side or {}),
    }
    candidates = int(machine.get("candidates") or persons)
    machine["candidates"] = candidates
    machine["chance_pct"] = 100.0 / candidates if candidates else None
    machine.update(chance)
    return {"human": human, "machine": machine}


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


def _rate_text(rate: dict[str, Any]) -> str:
    return Rate(**rate).text()


def threat_sentence(threat: dict[str, Any]) -> str:
    """Return the assumptions of a human-vs-machine comparison in one clause."""
    machine, human = threat.get("machine", {}), threat.get("human", {})
    null = machine.get("strongest_null_pct")
    knowledge = f" ({machine['knowledge']})" if machine.get("knowledge") else ""
    return (
        f"closed-world machine choosing among N = {machine.get('candidates')} persons"
        f"{knowledge} (chance {_pct(machine.get('chance_pct'))} per attack, "
        f"{_pct(null)} for any of its {len(machine.get('attacks', []))} attacks by "
        f"permutation) vs open-world intruders without a candidate list "
        f"(identified: {human.get('identified_rule_text', '')})"
    )


# The verdict of the headline comparison, one complete clause per branch (each is rendered by a
# test: a string split over lines once left "the 95 % intervals do not ." on every form).
COMPARISON_VERDICTS: dict[str, str] = {
    "machine_higher": (
        "the machine rate is higher than the human rate (the 95 % intervals do not overlap)"
    ),
    "machine_lower": (
        "the machine rate is lower than the human rate (the 95 % intervals do not overlap)"
    ),
    "overlap": "the 95 % intervals overlap: these data do not tell the two rates apart",
}


def comparison_branch(machine: dict[str, Any], human: dict[str, Any]) -> str:
    """Return which verdict the two Wilson intervals give (a key of COMPARISON_VERDICTS)."""
    if machine["ci_low"] > human["ci_high"]:
        return "machine_higher"
    if machine["ci_high"] < human["ci_low"]:
        return "machine_lower"
    return "overlap"


def comparison_sentence(headline: dict[str, Any], threat: dict[str, Any]) -> str | None:
    """Return the headline comparison with both intervals, n and the threat model."""
    if not headline or headline.get("human", {}).get("pct") is None:
        return None
    human = headline["human"]
    machine = headline["machine"][STRONGEST]
    verdict = COMPARISON_VERDICTS[comparison_branch(machine, human)]
    return (
        f"On the {headline['n_texts']} texts humans judged ({headline['persons']} persons), "
        f"under a {threat_sentence(threat)}: strongest adversary {_rate_text(machine)}, "
        f"intruders {_rate_text(human)}; {verdict}."
    )


def written_summary(report: RiskReport, human_method: str, labels: dict[str, str]) -> list[str]:
    """Return a few sentences written from the numbers: who is at risk, and what is compared.

    Each sentence with branches is built by a function of its own (`most_at_risk_sentence`,
    `comparison_sentence`, `chance_sentence`, ...), and every branch is rendered by a test.
    """
    paragraphs = []
    seen = labels.get(human_method, human_method)
    target = report.tables.get("rates_target", pd.DataFrame())
    sentence = most_at_risk_sentence(target, seen)
    if sentence:
        paragraphs.append(sentence)
    machine = report.tables["machine_per_text"]
    served = machine[machine["method"] == human_method]
    hit = served[served[f"{STRONGEST}_correct"].fillna(False).astype(bool)]
    if len(served):
        worst = hit.sort_values(f"{STRONGEST}_true_prob", ascending=False).head(3)
        listed = ", ".join(
            f"{r.external_id} ({r.target_name}, by {r.strongest_attacks})"
            for r in worst.itertuples()
        )
        rate = outcome_rate(served[f"{STRONGEST}_correct"])
        paragraphs.append(
            f"Of all {len(served)} texts of {seen} (judged or not), the strongest adversary "
            f"re-identifies {rate.text()}" + (f"; the most confident: {listed}." if listed else ".")
        )
    for sentence in (
        comparison_sentence(report.headline, report.threat_model),
        chance_sentence(report.headline, report.threat_model),
        correlation_sentence(report.correlations.get(STRONGEST)),
        agreement_sentence(report.tables.get("agreement")),
        methods_sentence(report.tables.get("trir_by_method")),
    ):
        if sentence:
            paragraphs.append(sentence)
    return paragraphs


def most_at_risk_sentence(target: pd.DataFrame, seen: str) -> str | None:
    """Return the (at most 3) persons the strongest adversary re-identifies most, with CIs.

    Persons at 0 % are never listed as at risk; when nobody is above 0 % the sentence says so.
    """
    key = f"trir_{STRONGEST}"
    if target.empty or key not in target:
        return None
    at_risk = target[target[key].fillna(0) > 0]
    if at_risk.empty:
        texts = int(target["n_texts"].sum())
        return (
            f"No person's texts of {seen} were re-identified by the strongest adversary "
            f"(0 of {texts} texts)."
        )
    top = at_risk.sort_values([key, "n_texts"], ascending=False).head(3)
    names = "; ".join(
        f"{r.target_name}: {_table_rate(r, STRONGEST).text()}" for r in top.itertuples()
    )
    return f"Persons most at risk from the machine on the texts of {seen}: {names}."


def _table_rate(row: Any, attack: str) -> Rate:
    """Return the Wilson rate of `attack` in a rates table row (k rebuilt from % and n)."""
    n = int(row.n_texts)
    return wilson(round(getattr(row, f"trir_{attack}") * n / 100), n)


# The strongest adversary's rate beside its own chance level: one clause per branch.
CHANCE_VERDICTS: dict[str, str] = {
    "above": "above what its any-attack rule scores by chance on these texts",
    "within": "not distinguishable from what its any-attack rule scores by chance on these "
    "texts: these data do not show that the attacks beat guessing",
    "below": "below what its any-attack rule scores by chance on these texts: the attacks do "
    "worse than guessing among the candidates, which points to too little background per "
    "person (see the cap column), not to safe texts",
}


def chance_branch(rate: dict[str, Any], chance_pct: float) -> str:
    """Return where a Wilson rate lies against a chance level (a key of CHANCE_VERDICTS)."""
    if rate["ci_low"] > chance_pct:
        return "above"
    if rate["ci_high"] < chance_pct:
        return "below"
    return "within"


def chance_sentence(headline: dict[str, Any], threat: dict[str, Any]) -> str | None:
    """Return the strongest adversary's rate on the judged texts beside its permutation null."""
    machine = (headline or {}).get("machine", {}).get(STRONGEST)
    null = (threat or {}).get("machine", {}).get("strongest_null_pct")
    if not machine or machine.get("pct") is None or null is None:
        return None
    verdict = CHANCE_VERDICTS[chance_branch(machine, null)]
    return (
        f"The strongest adversary's {_rate_text(machine)} is {verdict} "
        f"({null:.1f} %, permutation null)."
    )


def correlation_sentence(correlation: Correlation | None) -> str | None:
    """Return the per-person Spearman rho of humans and the strongest adversary, or its need."""
    if correlation is None:
        return None
    if correlation.rho is None:
        return f"Per person, Spearman rho (strongest adversary): {correlation.note}."
    return (
        "Per person, human and strongest-adversary rates correlate with Spearman "
        f"{correlation.text()}; the rho of each attack is in summary.json and the statistics "
        "table."
    )


def agreement_sentence(rows: pd.DataFrame | None) -> str | None:
    """Return kappa, McNemar and AUC of the strongest adversary against humans, per text."""
    if rows is None or rows.empty:
        return None
    row = rows[rows["attack"] == STRONGEST].iloc[0]
    if row["kappa"] is None and row["mcnemar_p"] is None and row["auc"] is None:
        return f"Per text: {row['note']}."
    return (
        f"Per text (strongest adversary vs humans, n = {row['n']} texts of "
        f"{row['persons']} persons): kappa = {_with_interval(row, 'kappa')}, McNemar "
        f"{p_text(row['mcnemar_p'])}, AUC of the machine's probability = "
        f"{_with_interval(row, 'auc')}; "
        f"{row['machine_only']} texts only the machine identified, {row['human_only']} only "
        "humans." + (f" Not shown: {row['note']}." if row["note"] else "")
    )


def methods_sentence(by_method: pd.DataFrame | None) -> str | None:
    """Return the strongest adversary's TRIR per method, and whether the methods differ."""
    key = f"trir_{STRONGEST}"
    if by_method is None or len(by_method) < 2:
        return None
    pieces = [
        f"{r.label}: {_table_rate(r, STRONGEST).text()} at {_pct(r.pct_words_masked)} words masked"
        for r in by_method.itertuples()
    ]
    stored = by_method[~by_method["method"].map(is_baseline)].sort_values(key)
    text = "TRIR of the strongest adversary per method: " + "; ".join(pieces) + "."
    if len(stored) > 1:
        best, runner_up = stored.iloc[0], stored.iloc[1]
        if best[f"{STRONGEST}_ci_high"] < runner_up[f"{STRONGEST}_ci_low"]:
            text += (
                f" Of the study's methods, {best['label']} leaves the least machine risk "
                "(95 % intervals apart)."
            )
        else:
            text += " The 95 % intervals of the study's methods overlap."
    return text


def _with_interval(row: Any, name: str) -> str:
    """Return kappa or AUC with its person-clustered bootstrap interval, where it has one."""
    low, high = row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    if row[name] is None or pd.isna(row[name]) or low is None or pd.isna(low):
        return _fmt(row[name])
    return f"{row[name]:.2f} (95 % CI {low:.2f} to {high:.2f}, person-clustered bootstrap)"


def _fmt(value: Any, digits: int = 2) -> str:
    return NOT_ENOUGH if value is None or pd.isna(value) else f"{value:.{digits}f}"


def llm_intruder_table(
    rows: list[dict[str, Any]], outcomes: pd.DataFrame, human_method: str | None
) -> pd.DataFrame:
    """Return the open-world LLM intruder's rate per method, and beside humans on their texts.

    The LLM names one person per text with no candidate list, scored by the human guesses'
    character cosine and threshold, so with one guess every rule of "identified by humans"
    gives the same outcome. Unusable answers are counted in `llm_failed`, never as misses.
    On the method the intruders saw, a second row takes exactly the texts humans judged,
    with the human rate (the study's rule) on the same texts.
    """
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame()
    frame["scored"] = frame["error_reason"].fillna("").astype(str) == ""
    has_humans = outcomes is not None and not outcomes.empty
    judged = set(outcomes["description_id"]) if has_humans else set()
    table = []
    for method, part in frame.groupby("method", sort=True):
        subsets = [("all texts of the method", part, None)]
        if method == human_method and judged:
            mine = outcomes[outcomes["description_id"].isin(set(part["description"]))]
            subsets.append(("judged by humans", part[part["description"].isin(judged)], mine))
        for label, texts, human in subsets:
            scored = texts[texts["scored"]]
            llm = wilson(int(scored["identified"].astype(bool).sum()), len(scored))
            row = {
                "method": method,
                "texts": label,
                "n_texts": llm.n,
                "llm_identified": llm.k,
                "llm_pct_identified": llm.pct,
                "llm_ci_low": llm.ci_low,
                "llm_ci_high": llm.ci_high,
                "llm_failed": int((~texts["scored"]).sum()),
            }
            if human is not None:
                people = outcome_rate(human["human_identified"].to_numpy(dtype=bool))
                row.update(
                    {
                        "human_n_texts": people.n,
                        "human_pct_identified": people.pct,
                        "human_ci_low": people.ci_low,
                        "human_ci_high": people.ci_high,
                    }
                )
            table.append(row)
    return pd.DataFrame(table)

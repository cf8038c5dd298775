"""The risk report's tables, and the report that holds them (`RiskReport`).

Django-free: each table is computed from tidy frames (`intruder.risk.selectors` builds them
from the database, the benchmark from its own runs); `intruder.risk.report.build` puts them
together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from attacks.strongest import STRONGEST
from intruder.analysis.intervals import Rate, wilson
from intruder.analysis.report import records
from intruder.identification import DEFAULT_RULE, IDENTIFIED_RULES
from intruder.risk.frontier import FRONTIER_TITLE
from intruder.risk.methods import is_baseline
from intruder.risk.predicted import lopo_validation, predict_with_intervals, text_evidence
from intruder.risk.stats import (
    Agreement,
    Correlation,
    agreement,
    outcome_rate,
    spearman_with_ci,
)
from model_runtime.guess_scoring import DEFAULT_RULE as DEFAULT_GUESS_RULE

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
    "knowledge_budget_predicted": "Knowledge-budget ladder: the predicted-human model refitted on "
    "each budget's evidence, leave one person out, beside the mean baseline",
    "llm_intruder": "Open-world LLM intruder beside the human intruders: no candidate list, one "
    "name per text, scored like a human guess",
    "familiarity_split": "Per famous person: the share of judgments naming the person (not the "
    "human rate) split into familiarity (intruders who had heard of the person, measured on the "
    "debrief) x naming-given-familiar",
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
    # The plots as SVG text, drawn on first use (`intruder.risk.plots.risk_svgs`): the page,
    # the standalone HTML and the files of one report show the same drawings, which were
    # drawn up to five times (about 0.5 s each) before.
    svgs: dict[str, str] | None = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the drawings: a stored report stays its size (the page's stored
        parts hold the same SVG text), and a process that loads it draws them when asked."""
        return {**self.__dict__, "svgs": None}

    def summary(self) -> dict[str, Any]:
        """Return the headline numbers as JSON-able values."""
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
    """Return the human and strongest-adversary rates on exactly the judged texts, and how
    many of those texts' judgments named another person of the study (`named_other`)."""
    wanted = ["description_id", "method", "human_identified"]
    wanted += [c for c in ("n_judgments", "n_named_other") if c in outcomes.columns]
    judged = machine[machine["method"] == method].merge(
        outcomes[wanted], on=["description_id", "method"], how="inner"
    )
    headline: dict[str, Any] = {
        "n_texts": len(judged),
        "persons": int(judged["target_key"].nunique()) if len(judged) else 0,
        "human": outcome_rate(judged["human_identified"]).to_dict(),
        "machine": {
            attack: outcome_rate(judged[f"{attack}_correct"]).to_dict()
            for attack in machine_attacks(judged)
        },
    }
    if "n_named_other" in judged.columns:
        headline["named_other"] = {
            "k": int(judged["n_named_other"].fillna(0).sum()),
            "judgments": int(judged["n_judgments"].fillna(0).sum()),
        }
    return headline


JUDGMENTS_ALL = "all"
JUDGMENTS_KEPT = "flagged excluded"


def sensitivity_table(
    machine: pd.DataFrame,
    human_texts: pd.DataFrame,
    method: str,
    rule: str,
    kept_texts: pd.DataFrame | None = None,
    guess_rule: str = DEFAULT_GUESS_RULE,
    other_guess_rules: list[tuple[str, pd.DataFrame]] | None = None,
) -> pd.DataFrame:
    """Return the headline (rates, kappa, rho of the strongest) under every rule.

    With `kept_texts` (the per-text frame of the judgments the study's exclusion rules keep),
    each rule appears twice: with all judgments and with flagged judgments excluded. With
    `other_guess_rules` (each other identification rule of a guess and the per-text frame of
    all judgments scored under it), each rule appears once more under each of them: the
    best-match rules beside the Textwash paper's. `chosen` marks the study's two rules.
    """
    variants = [(guess_rule, JUDGMENTS_ALL, human_texts)]
    if kept_texts is not None:
        variants.append((guess_rule, JUDGMENTS_KEPT, kept_texts))
    for other_rule, other_texts in other_guess_rules or []:
        variants.append((other_rule, JUDGMENTS_ALL, other_texts))
    rows = []
    for guess, label, texts in variants:
        for row in _sensitivity_rows(machine, texts, method, rule):
            row["chosen"] = bool(row["chosen"] and guess == guess_rule)
            rows.append({"guess_rule": guess, "judgments": label, **row})
    return pd.DataFrame(rows)


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
                "judgments_named_other": (head.get("named_other") or {}).get("k"),
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
    # `chosen` holds only under the study's guess rule (`sensitivity_table`).
    for column, value in _rho_columns(headline).items():
        sensitivity[column] = sensitivity[column].astype(object)
        sensitivity.loc[chosen, column] = value


def _method_part(results: pd.DataFrame, method: str, judged: set[Any] | None) -> pd.DataFrame:
    """Return a run's rows of `method`, on the judged texts where humans judged any."""
    part = results[results["method"] == method]
    return part[part["description_id"].isin(judged)] if judged else part


def _budget_columns(side: dict[str, Any]) -> dict[str, Any]:
    """Return the columns naming a ladder run: its id, b ("all" without a budget), R."""
    budget = side.get("knowledge_budget")
    return {
        "run": side.get("run"),
        "knowledge_budget": str(budget) if budget else "all",
        "resamples": side.get("budget_resamples") or 1,
    }


def _by_budget(rows: list[dict[str, Any]], then: str) -> pd.DataFrame:
    """Return the ladder's rows as a table ordered by b (numbers first, "all" last), then by
    `then` (the strongest adversary after the attacks)."""
    table = pd.DataFrame(rows)
    order = table["knowledge_budget"].map(lambda b: float("inf") if b == "all" else int(b))
    last = table[then].map(lambda v: v == STRONGEST)
    return (
        table.assign(_order=order, _last=last)
        .sort_values(["_order", "_last", then], kind="stable")
        .drop(columns=["_order", "_last"])
        .reset_index(drop=True)
    )


def knowledge_budget_table(
    runs: list[tuple[dict[str, Any], pd.DataFrame]],
    method: str,
    judged: set[Any] | None,
    human_target: pd.DataFrame | None,
    human: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Return one row per run and attack (the strongest adversary last): b, TRIR (Wilson CI),
    per-person rho, and beside it the human rate on the same texts.

    TRIR is the run's one TRIR (`machine_per_text`): the share of texts whose true person is
    ranked first (under a budget: whose median rank over the resamples is 1), with a Wilson
    interval over the texts, as in the headline, the open-world table, the per-method table,
    the per-text results and the API. Empty unless a run has a knowledge budget. runs:
    (machine side, results) of the study's finished cross-validated runs; rates on the texts
    of `method` (judged ones where any). `gap_pp`: TRIR minus the human rate.
    """
    if not any(side.get("knowledge_budget") for side, _ in runs):
        return pd.DataFrame()
    per_person_human: dict[str, float] = {}
    if human_target is not None and "human_pct_identified" in human_target:
        known = human_target.dropna(subset=["human_pct_identified"])
        per_person_human = dict(
            zip(known["target_key"], known["human_pct_identified"], strict=True)
        )
    rows = []
    for side, results in runs:
        part = _method_part(machine_per_text(results), method, judged)
        if part.empty:
            continue
        for attack in machine_attacks(part):
            correct = part[f"{attack}_correct"].fillna(False).astype(bool)
            rate = outcome_rate(correct)
            per_person = correct.groupby(part["target_key"]).mean() * 100
            keys = [k for k in per_person.index if k in per_person_human]
            rho = spearman_with_ci(
                [per_person_human[k] for k in keys], [per_person[k] for k in keys]
            )
            row = {
                **_budget_columns(side),
                "attack": attack,
                "n_texts": len(part),
                **_rate_columns("trir_", rate, "trir"),
                **_rho_columns(rho),
            }
            if human and human.get("pct") is not None:
                row.update(
                    {
                        "human_pct_identified": human["pct"],
                        "human_ci_low": human["ci_low"],
                        "human_ci_high": human["ci_high"],
                        "gap_pp": rate.pct - human["pct"] if rate.pct is not None else None,
                    }
                )
            rows.append(row)
    return _by_budget(rows, "attack") if rows else pd.DataFrame()


def nearest_budget(table: pd.DataFrame) -> dict[str, Any] | None:
    """Return the ladder's strongest-adversary row whose TRIR lies nearest the human rate
    (smallest |gap|; ties to the smaller budget), or None without a human rate."""
    if table.empty or "gap_pp" not in table:
        return None
    strongest = table[(table["attack"] == STRONGEST) & table["gap_pp"].notna()]
    if strongest.empty:
        return None
    order = strongest["knowledge_budget"].map(lambda b: float("inf") if b == "all" else int(b))
    chosen = strongest.assign(_gap=strongest["gap_pp"].abs(), _order=order).sort_values(
        ["_gap", "_order"]
    )
    return records(chosen.drop(columns=["_gap", "_order"]).head(1))[0]


def knowledge_budget_predicted_table(
    runs: list[tuple[dict[str, Any], pd.DataFrame]],
    method: str,
    judged: set[Any] | None,
    human_target: pd.DataFrame | None,
) -> pd.DataFrame:
    """Return one row per run: the predicted-human model refitted on the run's evidence, its
    leave-one-person-out rho and MAE and the mean baseline (`predicted.lopo_validation`, as
    the crowd-intruder benchmark). Empty without a budget run or human rates per person."""
    if human_target is None or "human_pct_identified" not in human_target:
        return pd.DataFrame()
    if not any(side.get("knowledge_budget") for side, _ in runs):
        return pd.DataFrame()
    known = human_target[human_target["human_n"].fillna(0) > 0]
    rows = []
    for side, results in runs:
        part = _method_part(machine_per_text(results), method, judged)
        attacks = [a for a in machine_attacks(part) if a != STRONGEST]
        if part.empty or not attacks:
            continue
        texts = part[["target_key", "group"]].assign(
            evidence=text_evidence(part, attacks).to_numpy()
        )
        persons = known[known["target_key"].isin(set(texts["target_key"]))]
        persons = pd.DataFrame(
            {
                "target_key": persons["target_key"],
                "group": persons["group"],
                "human_k": (persons["human_pct_identified"] * persons["human_n"] / 100).round(),
                "human_n": persons["human_n"],
                "human_pct": persons["human_pct_identified"],
            }
        )
        candidates = int(side.get("candidates") or results["target_key"].nunique())
        found = lopo_validation(persons, texts, attacks, candidates)
        rows.append(
            {
                **_budget_columns(side),
                "attacks": ", ".join(attacks),
                "n_texts": len(texts),
                "n": found["n"],
                **{
                    name: found.get(name)
                    for name in (
                        "lopo_rho",
                        "lopo_rho_ci_low",
                        "lopo_rho_ci_high",
                        "lopo_mae_pp",
                        "mean_baseline_mae_pp",
                    )
                },
                "note": found.get("note", ""),
            }
        )
    return _by_budget(rows, "run") if rows else pd.DataFrame()


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


def _default_human_method(machine: pd.DataFrame, human_texts: pd.DataFrame | None) -> str:
    """Return the method intruders saw most; without judgments, the first stored method."""
    if human_texts is not None and not human_texts.empty:
        judged = human_texts[human_texts["n_judgments"] > 0]
        if not judged.empty:
            return str(judged["method"].value_counts().idxmax())
    methods = list(machine["method"].unique())
    stored = [m for m in methods if not is_baseline(m)]
    return (stored or methods)[0]


def _named_other_count(rows: pd.DataFrame) -> int:
    """Return how many LLM rows named another person (rows stored before issue 46 lack it)."""
    if "named_other" not in rows.columns:
        return 0
    return int(rows["named_other"].fillna(False).astype(bool).sum())


def llm_intruder_table(
    rows: list[dict[str, Any]], outcomes: pd.DataFrame, human_method: str | None
) -> pd.DataFrame:
    """Return the open-world LLM intruder's rate per method, and beside humans on their texts.

    The LLM names one person per text with no candidate list, scored as the human guesses are
    (character cosine, threshold and the study's rule of a guess), so with one guess every
    rule of "identified by humans" gives the same outcome; `llm_named_other` counts first
    names closer to another person of the study. Unusable answers are counted in
    `llm_failed`, never as misses. On the method the intruders saw, a second row takes
    exactly the texts humans judged, with the human rate (the study's rule) on the same texts.
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
                "llm_named_other": int(
                    scored.get("named_other", pd.Series(dtype=bool))
                    .fillna(False)
                    .astype(bool)
                    .sum()
                ),
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

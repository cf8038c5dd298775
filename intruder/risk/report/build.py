"""Build the human-vs-machine risk report: its tables, statistics and written summary.

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

from typing import Any

import pandas as pd

from attacks.strongest import STRONGEST
from intruder.analysis.intervals import Rate
from intruder.identification import DEFAULT_RULE, IDENTIFIED_RULES
from intruder.risk.frontier import frontier_table
from intruder.risk.predicted import validation_text
from intruder.risk.report.summary import table_notes, written_summary
from intruder.risk.report.tables import (
    RISK_TABLE_TITLES,
    RiskReport,
    _default_human_method,
    _headline,
    _reuse_headline_rho,
    agreement_table,
    attack_names,
    coverage_table,
    human_outcomes,
    human_rates_from_outcomes,
    human_vs_machine_per_text,
    llm_intruder_table,
    machine_attacks,
    machine_per_text,
    person_correlations,
    predicted_human_tables,
    published_rates_with_ci,
    rates_beside,
    sensitivity_table,
    trir_by_method,
)
from intruder.risk.stats import (
    outcome_rate,
    strongest_null,
    wilson,
)
from model_runtime.guess_scoring import DEFAULT_RULE as DEFAULT_GUESS_RULE
from model_runtime.guess_scoring import IDENTIFICATION_RULES


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
    familiarity_decoys: Rate | None = None,
    guess_rule: str = DEFAULT_GUESS_RULE,
    other_guess_rules: list[tuple[str, pd.DataFrame]] | None = None,
) -> RiskReport:
    """Build every table of the report from the attack results and the human results.

    familiarity_split / measured_familiarity: where the study asked the familiarity question
    (`intruder.risk.familiarity`): the split table, and person -> share who had heard of them,
    which the predicted-human model then uses instead of the declared constant.
    familiarity_decoys: the Rate of decoy names ticked as heard of (the familiarity lists'
    public figures outside the study), said beside the split table.

    kept_texts: the per-text human results without the judgments the study's exclusion
    rules drop (flags); the sensitivity table then shows every rule with and without them.
    llm_rows: the open-world LLM intruder's scored guesses (`llm_intruder_table`).
    tpi: the run's stored TPI (`metric`, `ic_source`, `methods`: method -> %): the frontier.
    guess_rule: when one guess names the person (`model_runtime.guess_scoring`), the rule
    `human_texts` were scored under; other_guess_rules: each other rule and the per-text frame
    scored under it, which the sensitivity table shows beside.

    human_side / machine_side: what the caller knows of each threat model (instructions,
    intruders, candidate set, background); the report adds what it derives from the data.
    """
    report = RiskReport(settings=dict(settings or {}), provenance=dict(provenance or {}))
    report.settings["identified_rule"] = rule
    report.settings["identified_rule_text"] = IDENTIFIED_RULES[rule]
    report.settings["identification_rule"] = guess_rule
    report.settings["identification_rule_text"] = IDENTIFICATION_RULES[guess_rule]
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
            machine, human_texts, human_method, rule, kept_texts, guess_rule, other_guess_rules
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
        if familiarity_decoys is not None:
            report.settings["familiarity_decoys"] = familiarity_decoys.text()
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
        validation_text(calibration) if predicted else f"not shown: {why_not}."
    )
    # Every table file says whether the human data behind it are real (`rendering`).
    report.settings["human_data_simulated"] = bool((human_side or {}).get("simulated_intruders"))
    report.notes = table_notes(report, simulated=report.settings["human_data_simulated"])
    report.paragraphs = written_summary(report, human_method, labels or {})
    report.tables = {n: report.tables[n] for n in RISK_TABLE_TITLES if n in report.tables}
    return report


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
        "identification_rule": settings.get("identification_rule"),
        "identification_rule_text": settings.get("identification_rule_text"),
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
        if "n_named_other" in outcomes.columns:
            human["judgments_named_other"] = int(outcomes["n_named_other"].fillna(0).sum())
    persons = int(results["target_key"].nunique())
    machine: dict[str, Any] = {
        "world": "closed: every attack chooses among the candidate persons only",
        "attacks": attack_names(results),
        "rule": "an attack identifies a text when it ranks the true person first; the "
        "strongest adversary when any attack does",
        "background": settings.get("background"),
        "folds": settings.get("folds"),
        **(machine_side or {}),
    }
    candidates = int(machine.get("candidates") or persons)
    machine["candidates"] = candidates
    machine["chance_pct"] = 100.0 / candidates if candidates else None
    machine.update(chance)
    return {"human": human, "machine": machine}

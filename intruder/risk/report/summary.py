"""The risk report's words: each table's note and the summary written from the numbers.

Every sentence reads a number the tables hold (a rate with its n and interval, a chance
level, a correlation), so a summary never says more than the tables show.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from attacks.strongest import STRONGEST
from intruder.analysis.intervals import Rate, wilson
from intruder.risk.frontier import FRONTIER_NOTE
from intruder.risk.methods import is_baseline
from intruder.risk.report.tables import RiskReport
from intruder.risk.stats import (
    NOT_ENOUGH,
    Correlation,
    counted,
    outcome_rate,
    p_text,
)

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
    "summary). guess_rule is when one guess names the person: best_match (the true person is "
    "the guess's best match among the study's persons) or paper (the cosine alone, the "
    "Textwash paper); the rows of the rule the study did not choose show what guesses that "
    "named another person of the study change. Where a statistic is below its minimum "
    "sample, its note column says what it needs."
)


# The familiarity split's one sentence: every form shows it beside the table.
FAMILIARITY_NOTE = (
    "Over the judgments of intruders who answered the debrief's familiarity question: share "
    "of judgments naming the person = familiarity x naming-given-familiar + (1 - familiarity) "
    "x naming-given-unfamiliar, each a share of judgments with its Wilson interval; a judgment "
    "names the person under the study's rule of a guess. It is not the human rate, which "
    "counts texts under the study's rule of 'identified by humans' (the per-person table). "
    "Familiarity is measured, asked after the intruder's last answer was locked."
)


def table_notes(report: RiskReport, *, simulated: bool) -> dict[str, str]:
    """Return the sentence that explains each table that needs one (shown in every form)."""
    notes = {
        "open_world": OPEN_WORLD_NOTE,
        "knowledge_budget": KNOWLEDGE_NOTE,
        "knowledge_budget_predicted": KNOWLEDGE_PREDICTED_NOTE,
        "sensitivity": SENSITIVITY_NOTE,
        "per_text": PER_TEXT_NOTE.format(rule=report.settings["identified_rule_text"]),
        "frontier": FRONTIER_NOTE,
    }
    if "familiarity_split" in report.tables:
        decoys = report.settings.get("familiarity_decoys")
        notes["familiarity_split"] = (
            FAMILIARITY_NOTE
            + (
                f" Decoy names (public figures outside the study, listed beside the persons "
                f"each intruder judged) ticked as heard of: {decoys}."
                if decoys
                else ""
            )
            + (" These answers are SIMULATED by the demo, not people's." if simulated else "")
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
    "k-fold run); TRIR is the run's one TRIR, as in the headline and every other table: the "
    "share of the texts whose true person is ranked first (at a budget: whose median rank over "
    "the run's resamples is 1), with a Wilson interval over the texts. rho is the Spearman "
    "correlation of each person's machine rate with the human rate (Fisher interval); gap_pp "
    "the TRIR minus the human rate on the same texts. They are machine rates at a stated "
    "knowledge budget, not human rates."
)


def nearest_budget_sentence(row: dict[str, Any] | None, human: dict[str, Any] | None) -> str:
    """Return which budget's strongest adversary lies nearest the human rate, with both
    intervals ("" without a human rate)."""
    if not row or not human or human.get("pct") is None:
        return ""
    budget = row["knowledge_budget"]
    known = "every description outside the fold" if budget == "all" else f"b = {budget}"
    machine = Rate(
        k=round(row["trir"] * row["n_texts"] / 100),
        n=int(row["n_texts"]),
        pct=row["trir"],
        ci_low=row["trir_ci_low"],
        ci_high=row["trir_ci_high"],
    )
    return (
        f"Nearest the human rate: the strongest adversary at {known} (run {row['run']}), "
        f"{machine.text()}, beside the intruders' {_rate_text(human)} on the same texts: "
        f"{row['gap_pp']:+.1f} percentage points."
    )


KNOWLEDGE_PREDICTED_NOTE = (
    "One row per run of the ladder: the predicted-human model (2 parameters) refitted on that "
    "run's evidence (each text's reciprocal rank of the true person, averaged over the run's "
    "attacks; a budget run's rank is the median over its resamples) and this study's human "
    "rates, then validated leaving one person out: Spearman rho with its Fisher interval and "
    "the mean absolute error in percentage points, beside the error of predicting each person "
    "at the mean of the others. n = persons with a human rate; below the minimum no number is "
    "shown. A validation of predictions, not a human rate."
)


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
        f"(identified: {human.get('identified_rule_text', '')}{_guess_rule(human)})"
    )


def _guess_rule(human: dict[str, Any]) -> str:
    """Return "; a guess names the person when ..." where the threat model records the rule."""
    text = human.get("identification_rule_text")
    return f"; a guess names the person when {text}" if text else ""


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
    persons = counted(headline["persons"], "person")
    return (
        f"On the {headline['n_texts']} texts humans judged ({persons}), "
        f"under a {threat_sentence(threat)}: strongest adversary {_rate_text(machine)}, "
        f"intruders {_rate_text(human)}{named_other_clause(headline, threat)}; {verdict}."
    )


# What the study's rule of a guess did with guesses that named another person.
NAMED_OTHER_EFFECT: dict[str, str] = {
    "best_match_surname": "none counted as identified",
    "best_match": "none counted as identified",
    "paper": "counted as identified where the cosine to the true person reaches the threshold, "
    "as the paper's rule does",
}


def named_other_clause(headline: dict[str, Any], threat: dict[str, Any]) -> str:
    """Return ", k of n judgments named another person of the study (...)" or "" when the
    headline has no per-judgment data or no such judgment."""
    named = (headline or {}).get("named_other")
    if not named or not named.get("k"):
        return ""
    rule = (threat or {}).get("human", {}).get("identification_rule") or "best_match"
    return (
        f" ({named['k']} of {named['judgments']} judgments named another person of the study: "
        f"{NAMED_OTHER_EFFECT.get(rule, NAMED_OTHER_EFFECT['best_match'])})"
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

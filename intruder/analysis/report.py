"""Run every analysis of a study into a `Report` of tables (`report_files` writes it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from intruder.analysis import (
    agreement,
    anonymisability,
    construct_loss,
    flagged,
    leakage,
    paper,
    rates,
)
from intruder.analysis.frames import data_warnings
from intruder.analysis.per_text import per_text
from model_runtime.guess_scoring import DEFAULT_RULE, IDENTIFICATION_RULES

# Table name -> what it holds, in the order the page and the CLI present them.
TABLE_TITLES: dict[str, str] = {
    "rates_overall": "Overall identification rate",
    "rates_guess_rules": "Overall identification rate under each rule of a guess (the study's "
    "and the other)",
    "rates_group": "Per group (Table 3 layout)",
    "rates_target": "Per target person (Tables 4 and 7 layout)",
    "rates_flagged": "With all judgments and with flagged judgments excluded (study's rules)",
    "rates_target_paper": "Per target person beside the paper's published numbers",
    "rates_group_paper": "Per group beside the paper's published numbers",
    "per_text": "Per text",
    "agreement_overall": "Self-report agreement",
    "agreement_group": "Self-report agreement per group",
    "leakage_identified": "Leakage n-grams: what revealed the identity (Tables 5 and 8)",
    "leakage_not_identified": "Leakage n-grams: what intruders could tell (Table 6)",
    "anonymisability": "Anonymisability: not identified (0) vs identified (1) texts (Table 9)",
    "anonymisability_features": "Anonymisability variables per text",
    "construct_loss": "Construct loss: POS frequencies original vs anonymized (Table 2)",
    "construct_loss_mapped": "Construct loss with placeholders mapped to their POS",
}


@dataclass
class Report:
    """Every table of a study's analysis, with the warnings a reader must see."""

    threshold: float
    identification_rule: str = DEFAULT_RULE
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    paper_match: paper.PaperMatch | None = None

    def summary(self) -> dict[str, Any]:
        """Return the headline numbers as plain JSON-able values."""
        overall = self.tables.get("rates_overall")
        agree = self.tables.get("agreement_overall")
        result: dict[str, Any] = {
            "threshold": self.threshold,
            "identification_rule": self.identification_rule,
            "identification_rule_text": IDENTIFICATION_RULES[self.identification_rule],
            "warnings": self.warnings,
            "tables": sorted(self.tables),
            "paper_study": self.paper_match.study if self.paper_match else None,
        }
        if overall is not None and not overall.empty:
            result["overall"] = records(overall)[0]
            result["overall_text"] = rates.rate_text(result["overall"])
            result["named_other"] = {
                "k": result["overall"]["n_named_other"],
                "judgments": result["overall"]["n_judgments"],
            }
        if agree is not None and not agree.empty:
            result["self_report_agreement_pct"] = _plain(agree["pct_agreement"].iloc[0])
            if self.paper_match:
                result["paper_self_report_agreement_pct"] = paper.PAPER_AGREEMENT[
                    self.paper_match.study
                ]
        return result


def _plain(value: Any) -> Any:
    """Return `value` as a JSON-able Python scalar (NaN and NA -> None)."""
    if value is None or (not isinstance(value, str | bool) and pd.isna(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Return the rows of `frame` as JSON-able dicts (NaN -> None)."""
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def run_all(
    judgments: pd.DataFrame,
    texts: pd.DataFrame,
    threshold: float,
    *,
    include_construct_loss: bool = True,
    nlp: Any | None = None,
    paper_dir: Path | str | None = None,
    top_k: int = 10,
) -> Report:
    """Run every analysis; skip those the data cannot support and say why in `warnings`."""
    rules = (
        judgments["identification_rule"].dropna().unique()
        if "identification_rule" in judgments.columns
        else []
    )
    report = Report(
        threshold=threshold,
        identification_rule=str(rules[0]) if len(rules) == 1 else DEFAULT_RULE,
        warnings=data_warnings(judgments, texts),
    )
    if texts.empty:
        return report
    if not judgments.empty:
        tables = report.tables
        tables["rates_overall"] = rates.identification_rates(
            judgments, texts, threshold, by="overall"
        )
        tables["rates_guess_rules"] = rates.rates_under_guess_rules(
            judgments, texts, threshold, report.identification_rule
        )
        tables["rates_group"] = rates.identification_rates(judgments, texts, threshold, "group")
        tables["rates_target"] = rates.identification_rates(judgments, texts, threshold, "target")
        if "excluded" in judgments.columns:
            tables["rates_flagged"] = flagged.rates_with_and_without_flagged(
                judgments, texts, threshold
            )
        tables["per_text"] = per_text(judgments, texts, threshold)
        tables["agreement_overall"] = agreement.self_report_agreement(judgments, texts, threshold)
        tables["agreement_group"] = agreement.self_report_agreement(
            judgments, texts, threshold, by="group"
        )
        for outcome in ("identified", "not_identified"):
            table = leakage.leakage_ngrams(judgments, texts, threshold, outcome, k=top_k)
            tables[f"leakage_{outcome}"] = table
            if table.empty:
                report.warnings.append(
                    f"No leakage n-grams for {outcome.replace('_', ' ')} judgments: "
                    "no such judgment has a non-empty answer."
                )
        features = anonymisability.text_features(texts)
        tables["anonymisability_features"] = features
        tables["anonymisability"] = anonymisability.compare_identified(
            judgments, texts, threshold, features
        )
        _add_paper_comparison(report, texts, paper_dir)
    if include_construct_loss:
        nlp = nlp or construct_loss.load_pos_pipeline()
        originals = construct_loss.pos_frequencies(texts["original"].tolist(), nlp)
        report.tables["construct_loss"] = construct_loss.construct_loss(
            texts, nlp, original_frequencies=originals
        )
        report.tables["construct_loss_mapped"] = construct_loss.construct_loss(
            texts, nlp, map_placeholders=True, original_frequencies=originals
        )
    ordered = {name: report.tables[name] for name in TABLE_TITLES if name in report.tables}
    report.tables = ordered
    return report


def _add_paper_comparison(report: Report, texts: pd.DataFrame, paper_dir: Any) -> None:
    """Add the paper's published rates beside the study's, where the study imports its texts."""
    published = paper.load_paper_rates(paper_dir)
    if published is None:
        return
    match = paper.detect_paper_study(texts["external_id"].astype(str), paper_dir)
    if match is None:
        return
    report.paper_match = match
    report.tables["rates_target_paper"] = paper.beside_paper(
        report.tables["rates_target"], published, match.study, by="target"
    )
    report.tables["rates_group_paper"] = paper.beside_paper(
        report.tables["rates_group"], published, match.study, by="group"
    )
    if match.n_matched < match.n_texts:
        report.warnings.append(
            f"Only {match.n_matched} of {match.n_texts} texts are from the paper's study "
            f"{match.study}; its published numbers are shown for orientation."
        )

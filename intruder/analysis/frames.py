"""The two tidy input frames of every analysis, and the checks that report bad data.

judgments: one row per judgment.
    judgment_id, text_id, participant_id, self_identified (bool), guessed_name,
    revealing_text, other_knowledge, cosine (float in [0, 1]), identified (bool),
    token_set_ratio (0-100), surname_match (bool), and optionally other_cosine (the guess's
    best cosine to another person of the study; missing or empty = no other person known),
    surname_agrees (a word of the guess is the person's surname, `guess_scoring.
    surname_in_guess`; missing or empty = read from guessed_name and the text's target_name,
    or unknown, which refuses nothing, where guessed_name is empty)
    and identification_rule (`model_runtime.guess_scoring.IDENTIFICATION_RULES`; missing =
    the default, best_match_surname). The rule travels with the judgments because it is how
    they are scored: a sensitivity table re-scores a copy under each other rule.
texts: one row per anonymized text shown (or showable) to intruders.
    text_id, description_id, external_id, target_key, target_name, group,
    original, anonymized, placeholders (list of placeholder strings used in `anonymized`)
"""

from __future__ import annotations

import pandas as pd

from intruder.exceptions import IntruderError
from model_runtime.guess_scoring import (
    BEST_MATCH_SURNAME,
    DEFAULT_RULE,
    IDENTIFICATION_RULES,
    PAPER,
    credit,
    surname_in_guess,
)

JUDGMENT_COLUMNS: tuple[str, ...] = (
    "judgment_id",
    "text_id",
    "participant_id",
    "self_identified",
    "guessed_name",
    "revealing_text",
    "other_knowledge",
    "cosine",
    "identified",
    "token_set_ratio",
    "surname_match",
    "other_cosine",
    "surname_agrees",
    "identification_rule",
)
TEXT_COLUMNS: tuple[str, ...] = (
    "text_id",
    "description_id",
    "external_id",
    "target_key",
    "target_name",
    "group",
    "original",
    "anonymized",
    "placeholders",
)
TARGET_COLUMNS: tuple[str, ...] = ("target_key", "target_name", "group")


class AnalysisInputError(IntruderError):
    """The input frames lack columns or hold values no analysis can use."""


def empty_judgments() -> pd.DataFrame:
    """Return a judgments frame with the right columns and no rows."""
    return pd.DataFrame({column: pd.Series(dtype=object) for column in JUDGMENT_COLUMNS})


def require_columns(frame: pd.DataFrame, columns: tuple[str, ...] | list[str], name: str) -> None:
    """Raise AnalysisInputError naming the missing columns of `frame`."""
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise AnalysisInputError(f"{name} frame lacks column(s): {', '.join(missing)}")


def judged_texts(judgments: pd.DataFrame, texts: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Return the judgments joined with their text's target, re-scored at `threshold`.

    `identified` and `named_other` are recomputed at `threshold` under the judgments'
    identification rule (`model_runtime.guess_scoring.credit`), so every table uses the
    study's current threshold and rule, whatever they were when the judgment was stored.
    `cosine` becomes the credited cosine: under the best-match rule a guess that named
    another person is credited 0 for the true person (so a text's mean cosine, the paper's
    per-text rule, cannot be reached by naming someone else); `raw_cosine` keeps the stored
    one. Judgments of texts missing from `texts` are refused: they cannot be attributed to a
    target.
    """
    require_columns(judgments, ["judgment_id", "text_id", "cosine", "self_identified"], "judgments")
    require_columns(texts, ["text_id", *TARGET_COLUMNS], "texts")
    unknown = set(judgments["text_id"]) - set(texts["text_id"])
    if unknown:
        raise AnalysisInputError(
            f"{len(unknown)} judgment(s) refer to texts not in the texts frame: "
            f"{sorted(unknown)[:5]}"
        )
    if judgments["cosine"].isna().any():
        ids = judgments.loc[judgments["cosine"].isna(), "judgment_id"].tolist()
        raise AnalysisInputError(f"judgment(s) without a cosine score: {ids[:5]}")
    merged = judgments.merge(
        texts[["text_id", "external_id", *TARGET_COLUMNS]], on="text_id", how="left"
    )
    merged["raw_cosine"] = merged["cosine"].astype(float)
    other = (
        merged["other_cosine"].astype(float).fillna(0.0)
        if "other_cosine" in merged.columns
        else pd.Series(0.0, index=merged.index)
    )
    rules = (
        merged["identification_rule"].fillna(DEFAULT_RULE)
        if "identification_rule" in merged.columns
        else pd.Series(DEFAULT_RULE, index=merged.index)
    )
    unknown = set(rules) - set(IDENTIFICATION_RULES)
    if unknown:
        raise AnalysisInputError(
            f"unknown identification rule(s) {sorted(unknown)}: use {sorted(IDENTIFICATION_RULES)}"
        )
    agrees = _surname_agreement(merged)
    earned = [
        credit(c, o, threshold, r, s)
        for c, o, r, s in zip(merged["raw_cosine"], other, rules, agrees, strict=True)
    ]
    merged["other_cosine"] = other
    merged["surname_agrees"] = agrees
    merged["identified"] = pd.Series([e.identified for e in earned], index=merged.index, dtype=bool)
    merged["named_other"] = pd.Series(
        [e.named_other for e in earned], index=merged.index, dtype=bool
    )
    # A guess the rule refuses for its name (another person, or no surname) is credited no
    # cosine for the true person either (the per-text mean rule reads it).
    refused = (merged["named_other"] & (rules != PAPER)) | (
        ~agrees & (rules == BEST_MATCH_SURNAME) & (merged["raw_cosine"] > 0)
    )
    merged["cosine"] = merged["raw_cosine"].where(~refused, 0.0)
    merged["self_identified"] = merged["self_identified"].astype(bool)
    return merged


def _surname_agreement(merged: pd.DataFrame) -> pd.Series:
    """Return whether each guess holds its person's surname: the stored answer, else read
    from the guess and the text's target name (a frame from a file or an older export); a
    frame without the guess's words (hand-made, cosines only) cannot say, and the cosine
    alone decides there, as before the rule."""
    stored = (
        merged["surname_agrees"]
        if "surname_agrees" in merged.columns
        else pd.Series(None, index=merged.index, dtype=object)
    )
    guesses = (
        merged["guessed_name"].fillna("").astype(str)
        if "guessed_name" in merged.columns
        else pd.Series("", index=merged.index)
    )
    values = [
        bool(s)
        if s is not None and not pd.isna(s)
        else (not g.strip() or surname_in_guess(g, [str(name)]))
        for s, g, name in zip(stored, guesses, merged["target_name"], strict=True)
    ]
    return pd.Series(values, index=merged.index, dtype=bool)


def with_rule(judgments: pd.DataFrame, rule: str) -> pd.DataFrame:
    """Return a copy of `judgments` to be scored under `rule` (the sensitivity tables)."""
    if rule not in IDENTIFICATION_RULES:
        raise AnalysisInputError(f"unknown identification rule {rule!r}")
    return judgments.assign(identification_rule=rule)


def data_warnings(judgments: pd.DataFrame, texts: pd.DataFrame) -> list[str]:
    """Return plain-language warnings about data that make some numbers undefined or thin."""
    warnings: list[str] = []
    if texts.empty:
        warnings.append("The study has no anonymized texts: there is nothing to analyse.")
        return warnings
    if judgments.empty:
        warnings.append(
            "The study has no judgments yet: identification rates, agreement and leakage "
            "cannot be computed. Construct loss (texts only) is still reported."
        )
        return warnings
    counts = judgments.groupby("text_id").size().reindex(texts["text_id"], fill_value=0)
    unjudged = int((counts == 0).sum())
    single = int((counts == 1).sum())
    if unjudged:
        warnings.append(
            f"{unjudged} of {len(counts)} text(s) have no judgment; they are left out of the "
            "identification rates (counted as n_texts_unjudged)."
        )
    if single:
        warnings.append(
            f"{single} text(s) have one judgment only: their per-text SD of cosine is "
            "undefined (shown as empty, see the note column)."
        )
    return warnings

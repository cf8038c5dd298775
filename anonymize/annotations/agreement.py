"""Inter-annotator agreement as TAB's Table 5 reports it.

Three label dimensions (entity type, identifier type, confidential attribute), two units:

- **span**: the items are the spans any annotator marked in a document. *Exact* matching
  identifies a span by its start and end offsets, *partial* matching by its start offset only
  (TAB, section 5.2). An annotator who annotated the document but did not mark a span gives
  it the label "not annotated" for observed agreement and κ; for Krippendorff's α that is a
  missing value, so it does not count as disagreement (as TAB describes α).
- **character**: every character of every document is an item, labelled with the mention
  covering it or "O"; no partial variant.

Measures: average observed agreement (share of agreeing rater pairs per item, averaged),
Fleiss' κ (Fleiss 1971, with the usual generalisation to a varying number of raters per
item), Cohen's κ for annotator pairs (scikit-learn) and Krippendorff's α, nominal
(`krippendorff` package). Only annotators who annotated a document rate its items.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from anonymize.annotations.schema import AnnotatedDocument, Mention

DIMENSIONS: tuple[str, ...] = ("entity_type", "identifier_type", "confidential_status")
NOT_ANNOTATED = "<not annotated>"
OUTSIDE = "O"


@dataclass
class Items:
    """Items × raters of one comparison: a label per rater, None where they did not rate."""

    raters: list[str]
    labels: list[list[str | None]]  # one row per item, one column per rater
    missing_is_label: list[list[bool]]  # True where the label stands for "not annotated"


def _label(mention: Mention, dimension: str) -> str:
    return getattr(mention, dimension)


def span_items(
    documents: Sequence[AnnotatedDocument], raters: Sequence[str], dimension: str, partial: bool
) -> Items:
    """Return span items: every (document, span) any of `raters` marked."""
    rows, missing = [], []
    for document in documents:
        present = [r for r in raters if r in document.annotations]
        if len(present) < 2:
            continue
        by_rater: dict[str, dict] = {}
        for rater in present:
            keyed: dict = {}
            for mention in sorted(document.annotations[rater], key=lambda m: (m.start, m.end)):
                key = mention.start if partial else (mention.start, mention.end)
                keyed.setdefault(key, _label(mention, dimension))
            by_rater[rater] = keyed
        keys = sorted(set().union(*(k.keys() for k in by_rater.values())), key=str)
        for key in keys:
            row, flags = [], []
            for rater in raters:
                if rater not in by_rater:
                    row.append(None)
                    flags.append(False)
                elif key in by_rater[rater]:
                    row.append(by_rater[rater][key])
                    flags.append(False)
                else:
                    row.append(NOT_ANNOTATED)
                    flags.append(True)
            rows.append(row)
            missing.append(flags)
    return Items(list(raters), rows, missing)


def character_items(
    documents: Sequence[AnnotatedDocument], raters: Sequence[str], dimension: str
) -> Items:
    """Return character items: each character labelled with its mention's label or "O"."""
    rows: list[list[str | None]] = []
    for document in documents:
        present = [r for r in raters if r in document.annotations]
        if len(present) < 2:
            continue
        columns = []
        for rater in raters:
            if rater not in document.annotations:
                columns.append([None] * len(document.text))
                continue
            labels: list[str | None] = [OUTSIDE] * len(document.text)
            for mention in sorted(document.annotations[rater], key=lambda m: -m.start):
                labels[mention.start : mention.end] = [_label(mention, dimension)] * (
                    mention.end - mention.start
                )
            columns.append(labels)
        rows.extend(list(row) for row in zip(*columns, strict=True))
    return Items(list(raters), rows, [[False] * len(raters) for _ in rows])


def _count_table(items: Items) -> tuple[np.ndarray, list[str]]:
    """Return items × categories counts of raters (missing raters left out)."""
    categories = sorted({label for row in items.labels for label in row if label is not None})
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(items.labels), len(categories)), dtype=np.int64)
    for i, row in enumerate(items.labels):
        for label in row:
            if label is not None:
                table[i, index[label]] += 1
    return table, categories


def observed_and_fleiss(items: Items) -> tuple[float | None, float | None, int]:
    """Return (average observed agreement, Fleiss' κ, items rated by 2+) of `items`."""
    table, _ = _count_table(items)
    if not len(table):
        return None, None, 0
    raters = table.sum(axis=1)
    table = table[raters >= 2]
    raters = raters[raters >= 2]
    if not len(table):
        return None, None, 0
    per_item = ((table * (table - 1)).sum(axis=1)) / (raters * (raters - 1))
    observed = float(per_item.mean())
    shares = table.sum(axis=0) / raters.sum()
    expected = float((shares**2).sum())
    kappa = None if math.isclose(expected, 1.0) else (observed - expected) / (1 - expected)
    return observed, kappa, len(table)


def cohen_kappa(items: Items) -> float | None:
    """Return Cohen's κ of a two-rater comparison (items both rated)."""
    from sklearn.metrics import cohen_kappa_score

    pairs = [(a, b) for a, b in items.labels if a is not None and b is not None]
    if not pairs:
        return None
    first, second = zip(*pairs, strict=True)
    if len(set(first) | set(second)) < 2:
        return None  # one label only: κ is undefined (no chance agreement to correct)
    value = float(cohen_kappa_score(first, second))
    return None if math.isnan(value) else value


def krippendorff_alpha(items: Items) -> float | None:
    """Return nominal Krippendorff's α; "not annotated" spans are missing values."""
    import krippendorff

    categories = sorted(
        {
            label
            for row, flags in zip(items.labels, items.missing_is_label, strict=True)
            for label, flag in zip(row, flags, strict=True)
            if label is not None and not flag
        }
    )
    if len(categories) < 2:
        return None
    code = {c: float(i) for i, c in enumerate(categories)}
    data = np.full((len(items.raters), len(items.labels)), np.nan)
    for j, (row, flags) in enumerate(zip(items.labels, items.missing_is_label, strict=True)):
        for i, (label, flag) in enumerate(zip(row, flags, strict=True)):
            if label is not None and not flag:
                data[i, j] = code[label]
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    if not pairable.any():
        return None
    try:
        value = krippendorff.alpha(
            reliability_data=data[:, pairable],
            level_of_measurement="nominal",
            value_domain=list(code.values()),
        )
    except (ValueError, ZeroDivisionError):
        return None
    return None if math.isnan(value) else float(value)


def _measures(items: Items, pair: bool) -> dict[str, object]:
    observed, fleiss, rated = observed_and_fleiss(items)
    result: dict[str, object] = {
        "observed_agreement": observed,
        "krippendorff_alpha": krippendorff_alpha(items),
        "items": rated,
    }
    if pair:
        result["cohen_kappa"] = cohen_kappa(items)
    else:
        result["fleiss_kappa"] = fleiss
    return result


def agreement_table(
    documents: Sequence[AnnotatedDocument], raters: Sequence[str], pair: bool = False
) -> dict[str, dict]:
    """Return {dimension: {"span": {"exact", "partial"}, "character": {"exact"}}} measures."""
    table: dict[str, dict] = {}
    for dimension in DIMENSIONS:
        table[dimension] = {
            "span": {
                "exact": _measures(span_items(documents, raters, dimension, False), pair),
                "partial": _measures(span_items(documents, raters, dimension, True), pair),
            },
            "character": {"exact": _measures(character_items(documents, raters, dimension), pair)},
        }
    return table


def project_agreement(documents: Sequence[AnnotatedDocument]) -> dict[str, object]:
    """Return agreement over all annotators and for every annotator pair."""
    raters = sorted({r for d in documents for r in d.annotations})
    pairs = []
    for first, second in itertools.combinations(raters, 2):
        shared = [d for d in documents if first in d.annotations and second in d.annotations]
        if shared:
            pairs.append(
                {
                    "annotators": [first, second],
                    "documents": len(shared),
                    "measures": agreement_table(shared, [first, second], pair=True),
                }
            )
    multi = [d for d in documents if len(d.annotations) >= 2]
    return {
        "annotators": raters,
        "documents": len(multi),
        "measures": agreement_table(multi, raters),
        "pairs": pairs,
    }


def agreement_rows(result: dict[str, object]) -> list[dict[str, object]]:
    """Flatten `project_agreement` into CSV rows (one per scope, dimension, unit and match)."""
    scopes = [("all", "", "", result["documents"], result["measures"])]
    scopes += [
        ("pair", p["annotators"][0], p["annotators"][1], p["documents"], p["measures"])
        for p in result["pairs"]
    ]
    rows = []
    for scope, first, second, documents, measures in scopes:
        for dimension, units in measures.items():
            for unit, matches in units.items():
                for match, values in matches.items():
                    rows.append(
                        {
                            "scope": scope,
                            "annotator_a": first,
                            "annotator_b": second,
                            "documents": documents,
                            "dimension": dimension,
                            "unit": unit,
                            "match": match,
                            "items": values["items"],
                            "observed_agreement": values["observed_agreement"],
                            "kappa": values.get("fleiss_kappa", values.get("cohen_kappa")),
                            "kappa_kind": "fleiss" if scope == "all" else "cohen",
                            "krippendorff_alpha": values["krippendorff_alpha"],
                        }
                    )
    return rows

"""Render agreement tables in TAB's Table 5 layout."""

from __future__ import annotations

from django import template

register = template.Library()


def _fmt(value: object) -> str:
    return "–" if value is None else f"{value:.3f}"


@register.inclusion_tag("annotation/_agreement_table.html")
def agreement_table(measures: dict, kappa_key: str, kappa_label: str, scope: str = "") -> dict:
    """Return rows (dimension, unit) with exact/partial observed agreement, κ and α.

    `scope` names whose agreement it is: a page shows several tables, and each scrolling
    region needs its own name (landmarks must be unique).
    """
    rows = []
    for dimension, units in measures.items():
        for unit, matches in units.items():
            exact, partial = matches.get("exact", {}), matches.get("partial")

            def pair(key: str, exact=exact, partial=partial) -> tuple[str, str]:
                return _fmt(exact.get(key)), _fmt(partial.get(key)) if partial else "–"

            rows.append(
                {
                    "dimension": dimension.replace("_", " "),
                    "unit": unit,
                    "observed": pair("observed_agreement"),
                    "kappa": pair(kappa_key),
                    "alpha": pair("krippendorff_alpha"),
                    "items": exact.get("items"),
                }
            )
    return {"rows": rows, "kappa_label": kappa_label, "scope": scope}

"""The rehearsal's readable summary (summary.md), from rehearsal.json's data."""

from __future__ import annotations

from typing import Any


def summary_markdown(result: dict[str, Any]) -> str:
    """Return the summary a researcher reads before spending money: verdict first."""
    total = result["violations_total"]
    lines = [
        f"# Rehearsal of {result['study']}: "
        + ("no violation" if not total else f"{total} violation(s)"),
        "",
        f"Simulated crowd (no real person took part): {result['participants']} participants, "
        f"seed {result['seed']}; {result['study_seconds_skipped']:g} s of the study's waiting "
        f"skipped by the rehearsal's clock, every request at its real speed.",
        "",
        "| kind | participants |",
        "|---|---|",
        *(f"| {kind} | {n} |" for kind, n in sorted(result["kinds"].items())),
        "",
        "## Violations (each must be 0)",
        "",
        "| invariant | count | involved (first ones) |",
        "|---|---|---|",
    ]
    for v in result["violations"]:
        involved = "; ".join(v["involved"][:5]) or "-"
        lines.append(f"| {v['description']} | {v['count']} | {involved} |")
    costs = result["costs"]
    lines += [
        "",
        f"## Costs ({costs['currency']}, at this crowd's outcomes)",
        "",
        f"Rewards {costs['rewards']}, bonuses {costs['bonuses']}, Prolific's fee "
        f"{costs['prolific_fee']} (33.3 % of both; check your own terms).",
        "",
        f"CPU while the crowd played: the site {result['cpu']['site_seconds']} s, the crowd "
        f"{result['cpu']['crowd_seconds']} s, over {result['cpu']['participant_requests']} "
        "participant requests.",
        "",
        "## Per-step latency at the rehearsal's pace (wall clock, ms)",
        "",
        "| step | n | median | p95 |",
        "|---|---|---|---|",
        *(
            f"| {step} | {row['n']} | {row['p50_ms']} | {row['p95_ms']} |"
            for step, row in result["latency"].items()
        ),
        "",
        f"## Plan: the human rate's 95 % interval (target half-width "
        f"{result['plan']['target_half_width_pct']} points)",
        "",
        "| group | texts | judged at this design | expected rate % | half-width | intruders "
        "for the target | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for g in result["plan"]["groups"]:
        half = "-" if g["half_width_pct"] is None else g["half_width_pct"]
        need = "-" if g["intruders_for_target"] is None else g["intruders_for_target"]
        lines.append(
            f"| {g['group']} | {g['texts']} | {g['judged_texts']} | {g['expected_rate_pct']} | "
            f"{half} | {need} | {g['note'] or ''} |"
        )
    lines += [
        "",
        "The plan assumes the honest crowd's rates (Textwash Table 3 by default), independent "
        "judgments and Wilson intervals: it is a forecast, not a measurement.",
        "",
    ]
    return "\n".join(lines)

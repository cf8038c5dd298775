"""Template tags that put the risk check on the study and review pages (one line each there)."""

from __future__ import annotations

from typing import Any

from django import template

from intruder.models import AnonymizedText, Study
from intruder.risk.flags import (
    RiskFlag,
    latest_risk_check,
    predicted_risk,
    risk_flags,
)
from intruder.risk.selectors import latest_run

register = template.Library()


def _flags_for(context: template.Context, study_id: int) -> tuple[Any, dict[int, RiskFlag]]:
    """Return the study's latest risk check and its flags, computed once per page render."""
    key = ("risk_flags", study_id)
    if key not in context.render_context:
        run = latest_risk_check(study_id)
        context.render_context[key] = (run, risk_flags(run))
    return context.render_context[key]


@register.inclusion_tag("risk/_check_panel.html", takes_context=True)
def risk_check_panel(context: template.Context, study: Study, can_edit: bool) -> dict[str, Any]:
    """Show the latest risk check (status, flagged texts) and a button to run one."""
    run, flags = _flags_for(context, study.pk)
    return {
        "study": study,
        "can_edit": can_edit,
        "run": run,
        "flagged": len(flags),
        "predicted": predicted_risk(run),
        "csrf_token": context.get("csrf_token"),
    }


@register.inclusion_tag("risk/_flag.html", takes_context=True)
def risk_flag(context: template.Context, text: AnonymizedText) -> dict[str, Any]:
    """Flag a text whose true person the machine ranks first, with the words that drove it."""
    _, flags = _flags_for(context, text.description.study_id)
    return {"flag": flags.get(text.pk)}


@register.inclusion_tag("risk/_controls.html", takes_context=True)
def risk_controls(context: template.Context, study: Study, can_edit: bool) -> dict[str, Any]:
    """Show the study's attack runs (latest report, risk check) and links to the risk page."""
    run, flags = _flags_for(context, study.pk)
    return {
        "study": study,
        "can_edit": can_edit,
        "report_run": latest_run(study),
        "check": run,
        "flagged": len(flags),
        "csrf_token": context.get("csrf_token"),
    }

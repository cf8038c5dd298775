"""The risk page's computed part and the report behind it, registered with the report store
(`intruder.reports`), which keeps them per version of the study's data; and risk's rows that
version digests (its runs, its results)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Count, Max, QuerySet

from intruder.models import Study
from intruder.reports.registry import register_page, register_study_rows
from intruder.risk.models import AttackResult, AttackRun
from intruder.risk.rendering import report_context, standalone_page
from intruder.risk.selectors import run_report


def risk_report(study: Study, args: tuple[Any, ...]) -> Any:
    """Return the human-vs-machine report of the run `args[0]` (the risk downloads' source)."""
    return run_report(study.attack_runs.select_related("job", "study").get(pk=args[0]))


def risk_page_parts(study: Study, args: tuple[Any, ...], report: Any) -> dict[str, Any]:
    """Return the computed part of the risk page for the run `args[0]` of the study, drawn
    from that run's `report` (RISK_REPORT)."""
    return report_context(report)


def report_title(run: AttackRun) -> str:
    """Return the title of a run's report (HTML, PDF)."""
    return f"Human vs machine re-identification risk: {run.study.title} (run {run.pk})"


def risk_html(study: Study, args: tuple[Any, ...], parts: dict[str, Any]) -> str:
    """Return the run `args[0]`'s report as one standalone HTML file, from the page's parts
    (RISK_PAGE: the same plots and tables, drawn once). Stored beside the report for every
    process, not rendered per download."""
    return standalone_page(parts, report_title(study.attack_runs.get(pk=args[0])))


# Not a page: the report behind the risk page and its downloads. A deleted run's reports
# are dropped.
RISK_REPORT = register_page("risk-report", risk_report, gone=(AttackRun.DoesNotExist,))
RISK_PAGE = register_page(
    "risk-page", risk_page_parts, drawn_from=RISK_REPORT, gone=(AttackRun.DoesNotExist,)
)
# Not a page either: the report.html download, drawn from the page's parts.
RISK_HTML = register_page(
    "risk-html", risk_html, drawn_from=RISK_PAGE, gone=(AttackRun.DoesNotExist,)
)


def attack_runs_rows(study: Study) -> QuerySet[AttackRun]:
    """Return the study's attack runs, which its data version digests whole."""
    return AttackRun.objects.filter(study=study).order_by("pk")


def attack_results_rows(study: Study) -> Iterable[tuple[Any, ...]]:
    """Return the study's attack results by number and newest id (they are written once)."""
    results = AttackResult.objects.filter(run__study=study).aggregate(n=Count("pk"), last=Max("pk"))
    return [(results["n"], results["last"])]


register_study_rows("runs", attack_runs_rows)
register_study_rows("attack_results", attack_results_rows)

"""Risk's parts of the core's researcher pages (`intruder.views.researcher.parts`): the risk
controls on the study page, the pre-release risk check's panel and its flag per text on the
review pages, the guard's form, status and columns on the review list, and the texts the check
flags before a release. The HTML comes from risk's own templates (`risk/_controls.html`,
`_check_panel.html`, `_flag.html`, `_guard_*.html`)."""

from __future__ import annotations

from collections.abc import Collection

from django.http import HttpRequest
from django.template.loader import render_to_string

from intruder.models import AnonymizedText, Study
from intruder.risk.flags import RiskFlag, latest_risk_check, predicted_risk, risk_flags
from intruder.risk.guard_views import guard_form, guard_skipped_reasons, latest_guard_results
from intruder.risk.selectors import latest_run
from intruder.views.researcher.parts import ResearcherParts, ReviewListParts, register


def study_panel(request: HttpRequest, study: Study, can_edit: bool) -> str:
    """Show the study's attack runs (latest report, risk check) and links to the risk page."""
    run = latest_risk_check(study)
    context = {
        "study": study,
        "can_edit": can_edit,
        "report_run": latest_run(study),
        "check": run,
        "flagged": len(risk_flags(run)),
    }
    return render_to_string("risk/_controls.html", context, request=request)


def _flag_html(request: HttpRequest, flag: RiskFlag | None) -> str:
    return render_to_string("risk/_flag.html", {"flag": flag}, request=request) if flag else ""


def review_list(
    request: HttpRequest, study: Study, can_edit: bool, texts: Collection[AnonymizedText]
) -> ReviewListParts:
    """Return the review list's parts: the latest risk check (status, flagged texts, a button
    to run one) with the flag of each text whose true person the machine ranks first and the
    words that drove it; the guard's form and status, and its columns for `texts`."""
    run = latest_risk_check(study)
    flags = risk_flags(run)
    check = {
        "study": study,
        "can_edit": can_edit,
        "run": run,
        "flagged": len(flags),
        "predicted": predicted_risk(run),
    }
    guard_run, guard_job, guarded = latest_guard_results(study)
    skipped = guard_skipped_reasons(guard_run)
    guard = {
        "study": study,
        "can_edit": can_edit,
        "guard_run": guard_run,
        "guard_job": guard_job,
        "guard_form": guard_form(study),
    }
    # The guard's columns exist while a guard run has (or may yet have) rows to show.
    columns = guard_job is not None and guard_job.status != "failed"
    cells = {
        t.pk: render_to_string(
            "risk/_guard_cells.html",
            {
                **guard,
                "t": t,
                "row": {"guard": guarded.get(t.pk), "guard_skipped": skipped.get(t.pk, "")},
            },
            request=request,
        )
        for t in (texts if columns else ())
    }
    return ReviewListParts(
        panel=render_to_string("risk/_check_panel.html", check, request=request),
        after=render_to_string("risk/_guard_panel.html", guard, request=request),
        header=render_to_string("risk/_guard_header.html", guard, request=request)
        if columns
        else "",
        cells=cells,
        flags={text_id: _flag_html(request, flag) for text_id, flag in flags.items()},
    )


def text_flag(request: HttpRequest, text: AnonymizedText) -> str:
    """Return the text's flag from the latest risk check ("" when the machine missed it)."""
    flags = risk_flags(latest_risk_check(text.description.study_id))
    return _flag_html(request, flags.get(text.pk))


def machine_flags(study: Study) -> Collection[int]:
    """Return the ids of the texts the latest risk check's attacks ranked first."""
    return set(risk_flags(latest_risk_check(study)))


def register_researcher_parts() -> None:
    register(
        "risk",
        ResearcherParts(
            study_panel=study_panel,
            review_list=review_list,
            text_flag=text_flag,
            machine_flags=machine_flags,
        ),
    )

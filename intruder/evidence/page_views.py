"""The server's own evidence of how a text was read: its page views and their telemetry.

Every serving of an assigned text's page (the first and each reload) is a `PageView` with
an unguessable token and the time it was served. The page's telemetry must name that token;
it arrives when the participant leaves the page (a beacon) and with the answer, and each
report of a view merges into it (counters only grow, so replays change nothing). At answer
time `assignment_evidence` puts the views side by side with the server's clock: the time
from first serving to answer, the reloads, the time no view accounts for, the telemetry's
running totals over all views, and every report that does not fit what the server saw.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from intruder.evidence.models import PageView
from intruder.evidence.telemetry import (
    ABSENCES,
    TelemetryReport,
    clock_slack_ms,
    telemetry_merge,
    telemetry_parse,
    telemetry_sum,
    undercount_slack_ms,
)
from intruder.models import Assignment, Participant

# Views of one assignment beyond this are not recorded (a reload loop is evidence enough);
# the page then reuses the last view's token.
MAX_VIEWS = 50
JUDGE_FIELDS = ("guessed_name", "revealing_text", "other_knowledge")


def _ms(later: datetime, earlier: datetime) -> int:
    return max(0, int((later - earlier).total_seconds() * 1000))


def page_view_serve(*, assignment: Assignment, now: datetime | None = None) -> PageView:
    """Record one serving of the assignment's page and return it (its token goes in the page)."""
    now = now or timezone.now()
    views = assignment.page_views.count()
    if views >= MAX_VIEWS:
        return assignment.page_views.order_by("-served_at", "-id").first()
    return PageView.objects.create(
        assignment=assignment, token=secrets.token_urlsafe(24), served_at=now
    )


def page_view_report(
    *,
    participant: Participant,
    raw: str | None,
    now: datetime | None = None,
    assignment_id: int | None = None,
) -> PageView | None:
    """Merge a report into the page view it names; return the view, or None if it names none.

    Only a view of this participant's assignment still in progress takes reports: a report
    after the answer, or naming someone else's view, changes nothing. `assignment_id`, when
    given, must be the view's assignment.
    """
    now = now or timezone.now()
    signals = participant.study.telemetry_signals or []
    report = telemetry_parse(raw, signals=signals, answer_fields=JUDGE_FIELDS)
    if report.values is None or not report.view:
        return None
    views = PageView.objects.filter(
        token=report.view,
        assignment__participant=participant,
        assignment__status__in=(Assignment.Status.ACTIVE, Assignment.Status.RELEASED),
    )
    if assignment_id is not None:
        views = views.filter(assignment_id=assignment_id)
    with transaction.atomic():
        view = views.select_for_update().first()
        if view is None:
            return None
        view.telemetry = telemetry_merge(view.telemetry, report.values)
        view.problems = sorted(set(view.problems) | set(report.problems))
        view.reported_at = now
        view.save(update_fields=["telemetry", "problems", "reported_at"])
    return view


@dataclass
class Evidence:
    """What the server knows of how one assigned text was read, at answer time."""

    server_ms: int  # first serving -> answer, on the server's clock
    views: int
    reported_views: int
    # Time that no view's telemetry accounts for: views that never reported, and gaps
    # between leaving one view and the next serving.
    unaccounted_ms: int
    totals: dict[str, Any] | None  # the telemetry summed over the views; None: none came
    problems: list[str] = field(default_factory=list)
    # Whether the answer came with a well-formed report (bound to a view or not).
    answer_reported: bool = False
    # Absences the browser reported during which no other view of the page was shown.
    absent_ms: int = 0
    absences: int = 0  # how many the browser reported, over all views

    @property
    def away_ms(self) -> int:
        """Time away: when no view of the page was shown (reported or unaccounted)."""
        return self.absent_ms + self.unaccounted_ms


Span = tuple[datetime, datetime]


def _union(spans: list[Span]) -> list[Span]:
    merged: list[list[datetime]] = []
    for start, end in sorted(span for span in spans if span[1] > span[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def _uncovered_ms(window: Span, spans: list[Span]) -> int:
    """Return the ms of `window` that none of `spans` covers."""
    covered = 0
    for start, end in _union(spans):
        start, end = max(start, window[0]), min(end, window[1])
        covered += _ms(end, start)
    return max(0, _ms(window[1], window[0]) - covered)


def _minus(span: Span, holes: list[Span]) -> list[Span]:
    """Return `span` without `holes` (sorted, disjoint)."""
    parts, start = [], span[0]
    for hole_start, hole_end in holes:
        if hole_start > start:
            parts.append((start, min(hole_start, span[1])))
        start = max(start, hole_end)
    if start < span[1]:
        parts.append((start, span[1]))
    return [part for part in parts if part[1] > part[0]]


def assignment_evidence(
    *, assignment: Assignment, report: TelemetryReport, now: datetime
) -> Evidence:
    """Return the evidence of an assignment being answered now, with its answer's `report`.

    The answer's report must name the view it was made on, a view of this assignment; its
    figures are checked against that view's serving time like any other report.

    Views may overlap (a second tab of the same page, a reload): each reported view was
    shown from its serving to the end of its own count (the answer's view: plus the
    answer's travel, `clock_slack_ms(0)`),
    minus the absences it reported at their places on its clock. Time away is the time
    from the first serving to the answer during which no view was shown: an absence in one
    tab while another tab of the page was in front is not away; a view that never reported
    shows nothing. Of it, what lies outside every reported view's span (less the page's
    loading, `clock_slack_ms(0)`, before each serving) is "unaccounted", the rest absences.
    """
    shown_at = assignment.shown_at or assignment.assigned_at
    views = list(assignment.page_views.all())
    problems = list(report.problems)
    named = None
    if report.values is not None:
        named = next((view for view in views if view.token == report.view), None)
        if named is None:
            problems.append(
                "the answer's telemetry names no page view served for this text"
                if report.view
                else "the answer's telemetry names no page view"
            )
        else:
            named.telemetry = telemetry_merge(named.telemetry, report.values)
            named.reported_at = now
    window = (views[0].served_at if views else shown_at, now)
    load = timedelta(milliseconds=clock_slack_ms(0))
    alive: list[Span] = []
    shown: list[Span] = []
    unplaced = absences = 0
    reported = []
    for index, view in enumerate(views):
        ends = views[index + 1].served_at if index + 1 < len(views) else now
        problems += [f"page view {index + 1}: {problem}" for problem in view.problems]
        if view.telemetry is None:
            problems.append(
                f"page view {index + 1} of {len(views)} (served "
                f"{_ms(view.served_at, window[0]) / 1000:.0f} s after the first) sent no "
                "telemetry"
            )
            continue
        telemetry = view.telemetry
        reported.append(telemetry)
        page_ms = telemetry.get("page_ms")
        last_report = view.reported_at or ends
        if page_ms is not None:
            seen = _ms(last_report, view.served_at)
            if page_ms - seen > clock_slack_ms(seen) or seen - page_ms > undercount_slack_ms(seen):
                problems.append(
                    f"page view {index + 1}: the browser counted {page_ms / 1000:.1f} s on the "
                    f"page, the server {seen / 1000:.1f} s"
                )
        if page_ms is None:
            end = last_report
        elif view is named:
            # Shown until the answer left it; the request's travel (and a queue) is allowed.
            end = min(view.served_at + timedelta(milliseconds=page_ms) + load, now)
        else:
            end = min(view.served_at + timedelta(milliseconds=page_ms), last_report)
        span = (view.served_at, end)
        holes = [
            (view.served_at + timedelta(milliseconds=a), view.served_at + timedelta(milliseconds=b))
            for a, b in telemetry.get(ABSENCES, [])
        ]
        placed = sum(_ms(b, a) for a, b in holes)
        # Time away the view reported without saying when (a report without the list)
        # cannot be laid beside other views: it counts whole.
        unplaced += max(0, telemetry.get("away_ms", 0) - placed)
        absences += telemetry.get("focus_losses", 0)
        # The page's loading (the old page still in sight during a reload) is no absence
        # nobody accounts for; it does not cover another view's reported absence.
        alive.append((max(window[0], view.served_at - load), end))
        shown += _minus(span, holes)
    unaccounted = _uncovered_ms(window, alive)
    absent = _uncovered_ms(window, shown) - unaccounted + unplaced
    # With no telemetry at all nothing is known of absences ("no telemetry" says so).
    return Evidence(
        server_ms=_ms(now, shown_at),
        views=len(views),
        reported_views=len(reported),
        unaccounted_ms=unaccounted if reported else 0,
        totals=telemetry_sum(reported) if reported else None,
        problems=list(dict.fromkeys(problems)),
        answer_reported=report.values is not None,
        absent_ms=absent if reported else 0,
        absences=absences,
    )


def page_views_store(*, assignment: Assignment, report: TelemetryReport, now: datetime) -> None:
    """Merge the answer's own report into its view (inside the answer's transaction)."""
    if report.values is None or not report.view:
        return
    view = (
        PageView.objects.select_for_update()
        .filter(assignment=assignment, token=report.view)
        .first()
    )
    if view is None:
        return
    view.telemetry = telemetry_merge(view.telemetry, report.values)
    view.problems = sorted(set(view.problems) | set(report.problems))
    view.reported_at = now
    view.save(update_fields=["telemetry", "problems", "reported_at"])

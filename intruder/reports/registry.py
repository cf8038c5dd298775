"""What the report store can compute: the pages domains register, and whose data they read.

A page is a pure function of its owner's rows (a study, an annotation project) and its own
arguments that costs seconds of statistics and plotting; `intruder.reports.refresh` runs it
in a first view's request or in the `refresh_reports` job and stores what it returns. Each
domain registers its pages when the app is ready (`IntruderConfig.ready`), so that the
worker computes exactly what the page shows; this package imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet


@dataclass(frozen=True)
class ReportPage:
    """A registered report: `compute(owner, args[, drawn_from's report])`.

    `drawn_from` names another registered report (same owner and arguments) that this one is
    drawn from: it is stored too, so the downloads read it. `gone` are the errors that mean
    the arguments name a row that is gone (a deleted run): the report is dropped, not failed.
    """

    name: str
    compute: Callable[..., Any]
    drawn_from: str | None = None
    gone: tuple[type[Exception], ...] = ()


@dataclass(frozen=True)
class OwnerKind:
    """Whose data a report is computed from: `field` is its `ComputedReport` column (and the
    refresh job's parameter), `version` digests every row its reports read, `count` says
    how much data there is (the label's "from N <noun>s"), `load` finds one by primary key."""

    field: str
    version: Callable[[Any], str]
    count: Callable[[Any], int]
    noun: str
    load: Callable[[int], Any]


PAGES: dict[str, ReportPage] = {}
OWNERS: dict[str, OwnerKind] = {}
# A domain's own rows of a study that its reports read (risk's runs, answer evidence's
# attention checks), by label: `versions.study_data_version` digests them with the core's.
STUDY_ROWS: dict[str, Callable[[Any], QuerySet[Any] | Iterable[tuple[Any, ...]]]] = {}


def register_page(
    name: str,
    compute: Callable[..., Any],
    *,
    drawn_from: str | None = None,
    gone: tuple[type[Exception], ...] = (),
) -> str:
    """Register a report the store can compute; return its name."""
    PAGES[name] = ReportPage(name, compute, drawn_from, gone)
    return name


def register_owner(kind: OwnerKind) -> None:
    """Register whose data reports may be computed from (a study, an annotation project)."""
    OWNERS[kind.field] = kind


def register_study_rows(
    label: str, rows: Callable[[Any], QuerySet[Any] | Iterable[tuple[Any, ...]]]
) -> None:
    """Have a study's data version digest `rows(study)` too: the rows of a domain's own tables
    that its reports read, a queryset (digested whole but its volatile columns, in its order)
    or tuples of the domain's making (rows written once may count by number and newest id)."""
    STUDY_ROWS[label] = rows


def report_page(name: str) -> ReportPage:
    """Return the registered report `name` (KeyError names the registered ones)."""
    try:
        return PAGES[name]
    except KeyError:
        raise KeyError(f"no report {name!r}; registered: {sorted(PAGES)}") from None

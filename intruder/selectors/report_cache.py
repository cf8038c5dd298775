"""Computed reports cached per study data version: a page recomputes only when its data changed.

The risk and analysis reports are pure functions of a study's rows (judgments, texts, attack
results, flags, settings) but cost seconds of statistics and plotting. They are cached under
a key made of the report's name, its own arguments and `study_data_version`, a digest of
every row of the study those reports read, so any change (a new judgment, a confirmed flag,
a rescoring, a finished attack run, a changed setting) gives a new key and a fresh report.
Where Django's cache is Redis (`DJANGO_CACHE_URL`) every web worker shares the entries; with
the default local-memory cache each process keeps its own. The report pages themselves read
the reports stored in the database (`intruder.services.report_refresh`), which the worker
and every web process share and which may show an older report, labelled as such.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.core.cache import cache
from django.db.models import Count, Max, QuerySet

from intruder.models import (
    AnonymizedText,
    AttackResult,
    AttackRun,
    AttentionCheck,
    Description,
    Job,
    Judgment,
    Participant,
    Study,
    TargetPerson,
)

# Bump when a report's code changes what it computes from the same rows (a deployment with
# a shared Redis cache would otherwise serve reports computed by the previous code). 3: the
# risk report gained chance levels, table notes and the frontier (issue 35).
REPORT_CACHE_VERSION = 3
# Entries expire on their own too; a key for outdated data is simply never asked for again.
REPORT_CACHE_SECONDS = 6 * 3600

T = TypeVar("T")


# Jobs that only render or store what the reports compute (the PDF, the stored page reports)
# and feed none of them: their rows must not change the version their output is stored under.
OUTPUT_JOB_KINDS = (Job.Kind.RISK_REPORT_PDF, Job.Kind.REFRESH_REPORTS)
# Jobs whose output the reports read from rows of their own (an attack run's results and its
# summary, stored when every fold is in), not from the job: the run's job can then store the
# run's report before it ends, under the version it has once it ended.
ROW_OUTPUT_JOB_KINDS = (Job.Kind.ATTACK_STUDY, Job.Kind.ATTACK_FOLD)
# Columns that change without changing any report: a participant's last request (every page
# they load) and the resubmission form state, a running job's heartbeat and host.
VOLATILE_COLUMNS = {"last_seen_at", "form_state", "heartbeat_at", "worker"}


def _columns(rows: QuerySet[Any]) -> QuerySet[Any]:
    names = [f.attname for f in rows.model._meta.concrete_fields if f.name not in VOLATILE_COLUMNS]
    return rows.values_list(*names)


def _digest_rows(digest: Any, label: str, rows: Iterable[tuple[Any, ...]]) -> None:
    digest.update(label.encode())
    for row in rows:
        digest.update(repr(row).encode())


def study_data_version(study: Study) -> str:
    """Return a digest of every row of `study` its reports read (changes when any does).

    Rows that are written once (attack results) count by number and newest id; every other
    table contributes all its columns but VOLATILE_COLUMNS, so an update in place (a flag
    review, a rescoring, a text's status) changes the digest as an insert does.
    """
    digest = hashlib.sha256(f"v{REPORT_CACHE_VERSION}".encode())
    tables: list[tuple[str, QuerySet[Any]]] = [
        ("study", Study.objects.filter(pk=study.pk)),
        ("targets", TargetPerson.objects.filter(study=study).order_by("pk")),
        ("descriptions", Description.objects.filter(study=study).order_by("pk")),
        ("texts", AnonymizedText.objects.filter(description__study=study).order_by("pk")),
        ("participants", Participant.objects.filter(study=study).order_by("pk")),
        ("judgments", Judgment.objects.filter(participant__study=study).order_by("pk")),
        ("attention", AttentionCheck.objects.filter(participant__study=study).order_by("pk")),
        ("runs", AttackRun.objects.filter(study=study).order_by("pk")),
        (
            "jobs",
            Job.objects.filter(study=study)
            .exclude(kind__in=OUTPUT_JOB_KINDS + ROW_OUTPUT_JOB_KINDS)
            .order_by("pk"),
        ),
    ]
    for label, rows in tables:
        _digest_rows(digest, label, _columns(rows))
    results = AttackResult.objects.filter(run__study=study).aggregate(n=Count("pk"), last=Max("pk"))
    _digest_rows(digest, "attack_results", [(results["n"], results["last"])])
    return digest.hexdigest()


def project_data_version(project: Any) -> str:
    """Return a digest of what an annotation project's agreement reads: every submitted
    annotation of its annotators (the adjudicated gold layer left out, as agreement does)."""
    from intruder.annotation.selectors import project_gold

    gold = project_gold(project=project, include_adjudicated=False)
    return hashlib.sha256(f"v{REPORT_CACHE_VERSION}|{gold!r}".encode()).hexdigest()


def cached_for_inputs(name: str, inputs: Any, compute: Callable[[], T]) -> T:
    """Return `compute()`, cached under a digest of `inputs` (dataclasses and plain values
    whose repr shows every field): the key is the input itself, so it cannot go stale."""
    key_source = f"{name}|v{REPORT_CACHE_VERSION}|{inputs!r}"
    return _cached("intruder-computed:" + hashlib.sha256(key_source.encode()).hexdigest(), compute)


def _cached(key: str, compute: Callable[[], T]) -> T:
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, REPORT_CACHE_SECONDS)
    return value


def cached_for_study(study: Study, name: str, args: tuple[Any, ...], compute: Callable[[], T]) -> T:
    """Return `compute()` for this report of the study's current data, from the cache if made.

    `args` are the report's own arguments (a run id, a method) that the study's rows do not
    fix; they are part of the key.
    """
    key_source = f"{name}|{args!r}|{study.pk}|{study_data_version(study)}"
    return _cached("intruder-report:" + hashlib.sha256(key_source.encode()).hexdigest(), compute)

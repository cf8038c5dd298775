"""Data versions: a digest of every row a report reads, so any change gives a fresh report.

The risk and analysis reports are pure functions of a study's rows (judgments, texts, attack
results, flags, settings): `study_data_version` digests them, so a new judgment, a confirmed
flag, a rescoring, a finished attack run or a changed setting gives a new version. A domain's
own tables (risk's runs, answer evidence's attention checks) are digested with them through
`registry.register_study_rows`; other owners (an annotation project) register their own
digest (`registry.register_owner`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet

from intruder.models import (
    AnonymizedText,
    Description,
    Job,
    Judgment,
    Participant,
    Study,
    TargetPerson,
)
from intruder.reports.registry import STUDY_ROWS, OwnerKind, register_owner

# Bump when a report's code changes what it computes from the same rows (a deployment with
# a shared Redis cache would otherwise serve reports computed by the previous code). 3: the
# risk report gained chance levels, table notes and the frontier (issue 35).
REPORT_CACHE_VERSION = 3


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


def table_rows(rows: QuerySet[Any]) -> QuerySet[Any]:
    """Return the rows' values but VOLATILE_COLUMNS, as a study's data version digests them."""
    names = [f.attname for f in rows.model._meta.concrete_fields if f.name not in VOLATILE_COLUMNS]
    return rows.values_list(*names)


def _digest_rows(digest: Any, label: str, rows: Iterable[tuple[Any, ...]]) -> None:
    digest.update(label.encode())
    for row in rows:
        digest.update(repr(row).encode())


def study_data_version(study: Study) -> str:
    """Return a digest of every row of `study` its reports read (changes when any does).

    Every table contributes all its columns but VOLATILE_COLUMNS, so an update in place (a
    flag review, a rescoring, a text's status) changes the digest as an insert does; a
    domain's registered rows follow (rows written once, as attack results, may count by
    number and newest id).
    """
    digest = hashlib.sha256(f"v{REPORT_CACHE_VERSION}".encode())
    tables: list[tuple[str, QuerySet[Any]]] = [
        ("study", Study.objects.filter(pk=study.pk)),
        ("targets", TargetPerson.objects.filter(study=study).order_by("pk")),
        ("descriptions", Description.objects.filter(study=study).order_by("pk")),
        ("texts", AnonymizedText.objects.filter(description__study=study).order_by("pk")),
        ("participants", Participant.objects.filter(study=study).order_by("pk")),
        ("judgments", Judgment.objects.filter(participant__study=study).order_by("pk")),
        (
            "jobs",
            Job.objects.filter(study=study)
            .exclude(kind__in=OUTPUT_JOB_KINDS + ROW_OUTPUT_JOB_KINDS)
            .order_by("pk"),
        ),
    ]
    for label, rows in tables:
        _digest_rows(digest, label, table_rows(rows))
    for label in sorted(STUDY_ROWS):
        rows = STUDY_ROWS[label](study)
        _digest_rows(digest, label, table_rows(rows) if isinstance(rows, QuerySet) else rows)
    return digest.hexdigest()


def study_judgments(study: Study) -> int:
    """Return how many judgments the study has (the label's "from N judgments")."""
    return Judgment.objects.filter(participant__study=study).count()


register_owner(
    OwnerKind(
        field="study",
        version=study_data_version,
        count=study_judgments,
        noun="judgment",
        load=lambda pk: Study.objects.filter(pk=pk).first(),
    )
)

"""The agreement page's computed part, registered with the report store (`intruder.reports`),
with what an annotation project's reports read (the store's project owner)."""

from __future__ import annotations

import hashlib
from typing import Any

from anonymize.annotations.agreement import project_agreement
from intruder.annotation.adjudication import GOLD_LAYER
from intruder.annotation.models import Project, Task
from intruder.annotation.selectors import project_gold
from intruder.reports.registry import OwnerKind, register_owner, register_page
from intruder.reports.versions import REPORT_CACHE_VERSION


def project_data_version(project: Project) -> str:
    """Return a digest of what an annotation project's agreement reads: every submitted
    annotation of its annotators (the adjudicated gold layer left out, as agreement does)."""
    gold = project_gold(project=project, include_adjudicated=False)
    return hashlib.sha256(f"v{REPORT_CACHE_VERSION}|{gold!r}".encode()).hexdigest()


def project_annotations(project: Project) -> int:
    """Return how many annotations were submitted (the label's "from N ..."), gold left out."""
    tasks = Task.objects.filter(document__project=project, status=Task.Status.SUBMITTED)
    return tasks.exclude(annotator__name=GOLD_LAYER).count()


def agreement_page_result(project: Project, args: tuple[Any, ...] = ()) -> dict[str, Any]:
    """Return an annotation project's inter-annotator agreement (the gold layer left out)."""
    return project_agreement(project_gold(project=project, include_adjudicated=False))


register_owner(
    OwnerKind(
        field="project",
        version=project_data_version,
        count=project_annotations,
        noun="submitted annotation",
        load=lambda pk: Project.objects.filter(pk=pk).first(),
    )
)
AGREEMENT_PAGE = register_page("agreement-page", agreement_page_result)

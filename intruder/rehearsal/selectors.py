"""What the study page shows of rehearsals: the latest one's job and its verdict."""

from __future__ import annotations

from intruder.models import Job, Study


def latest_rehearsal(study: Study) -> Job | None:
    """Return the study's latest rehearsal job (its result holds the verdict once done)."""
    return Job.objects.filter(study=study, kind=Job.Kind.REHEARSE_STUDY).order_by("-pk").first()

"""Reads for the review pages: a study's anonymized texts, searched and filtered."""

from __future__ import annotations

from django.db.models import Q

from intruder.models import AnonymizedText, Study
from intruder.selectors.leak_checks import blocking_leaks, leak_warnings

FLAGGED = "flagged"
POSSIBLE = "possible"
UNREVIEWED = "unreviewed"
REVIEWED = "reviewed"


def review_texts(study: Study, status: str = "", query: str = "") -> list[AnonymizedText]:
    """Return the study's anonymized texts for review, filtered.

    `status`: a text status; FLAGGED (drafts held back by a blocking leak warning), POSSIBLE
    (drafts with any leak warning), UNREVIEWED or REVIEWED drafts. `query` matches the
    anonymized text, the original, the target's name or key, or the description's id.
    """
    texts = (
        AnonymizedText.objects.filter(description__study=study)
        .select_related("description__target")
        .order_by("description_id", "method")
    )
    query = query.strip()
    if query:
        texts = texts.filter(
            Q(text__icontains=query)
            | Q(description__text__icontains=query)
            | Q(description__target__name__icontains=query)
            | Q(description__target__key__icontains=query)
            | Q(description__external_id__icontains=query)
        )
    drafts = texts.filter(status=AnonymizedText.Status.DRAFT)
    if status == FLAGGED:
        return [t for t in drafts if blocking_leaks(t)]
    if status == POSSIBLE:
        return [t for t in drafts if leak_warnings(t)]
    if status == UNREVIEWED:
        return list(drafts.filter(reviewed_at__isnull=True))
    if status == REVIEWED:
        return list(texts.filter(reviewed_at__isnull=False))
    if status in AnonymizedText.Status.values:
        texts = texts.filter(status=status)
    return list(texts)

"""Progress figures of a study as the API reports them."""

from __future__ import annotations

import statistics
from typing import Any

from django.db.models import Count, Q

from intruder.models import AnonymizedText, Assignment, Judgment, Participant, Study


def study_progress(*, study: Study) -> dict[str, Any]:
    """Return collection and judgment progress of `study` in a few aggregate queries.

    `judgments_per_text` counts completed judgments of the texts intruders can be served
    (released, target group in `study.groups`), against the study's target.
    """
    participants = dict(
        Participant.objects.filter(study=study)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    texts = AnonymizedText.objects.filter(description__study=study)
    texts_by_status = dict(
        texts.values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    served = texts.filter(status=AnonymizedText.Status.RELEASED)
    if study.groups:
        served = served.filter(description__target__group__in=study.groups)
    counts = list(
        served.annotate(
            n=Count("judgments", distinct=True),
            active=Count(
                "assignments",
                filter=Q(assignments__status=Assignment.Status.ACTIVE),
                distinct=True,
            ),
        ).values_list("n", "active")
    )
    judged = [n for n, _ in counts]
    return {
        "descriptions": study.descriptions.count(),
        "anonymized_texts": {s: texts_by_status.get(s, 0) for s in AnonymizedText.Status.values},
        "participants": {s: participants.get(s, 0) for s in Participant.Status.values},
        "judgments": Judgment.objects.filter(participant__study=study).count(),
        "judgments_per_text": {
            "texts": len(judged),
            "min": min(judged) if judged else 0,
            "median": float(statistics.median(judged)) if judged else 0.0,
            "target": study.judgments_per_text,
            "in_progress": sum(active for _, active in counts),
        },
    }

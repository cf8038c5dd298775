"""Feed an intruder test with the descriptions its collection studies gathered.

An intruder study names one or more collection studies as its sources. Taking their
descriptions copies each target (kept under its key, or prefixed with the source's slug when
the key means someone else here) and each description, with provenance: `Description.source`
points at the collected description, `provenance` records the source study, the source
description's id and the writer's Prolific PID (kept even if the source is deleted). The
copies are then anonymized, reviewed and released like imported descriptions. Taking is
idempotent: a description already taken is skipped, so the researcher (or the anonymization
job, which takes first) can run it as often as writers finish.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from intruder.models import Description, Study, TargetPerson
from intruder.services.scoring import judgments_rescore


@dataclass
class TakeTally:
    """What taking descriptions from the source studies wrote."""

    descriptions_created: int = 0
    targets_created: int = 0
    targets_reused: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def study_sources_set(*, study: Study, sources: Iterable[Study]) -> None:
    """Make `sources` (collection studies) the studies whose descriptions `study` takes."""
    sources = list(sources)
    errors = []
    if sources and study.kind != Study.Kind.INTRUDER:
        errors.append("only an intruder test takes descriptions from other studies")
    for source in sources:
        if source.kind != Study.Kind.COLLECTION:
            errors.append(f"“{source.title}” is not a description-collection study")
        if source.pk == study.pk:
            errors.append("a study cannot take descriptions from itself")
    if errors:
        raise ValidationError({"source_studies": errors})
    study.source_studies.set(sources)


def pending_source_descriptions(study: Study) -> Any:
    """Return the source studies' descriptions this study has not taken yet.

    Descriptions whose flags a researcher confirmed (pasted or machine-written) are left out.
    """
    taken = Description.objects.filter(study=study, source__isnull=False).values("source_id")
    return (
        Description.objects.filter(study__in=study.source_studies.all())
        .exclude(pk__in=taken)
        .exclude(flag_review=Description.Review.CONFIRMED)
        .select_related("study", "target", "writer")
        .order_by("study_id", "id")
    )


def _target_for(study: Study, source_target: TargetPerson, tally: TakeTally) -> TargetPerson:
    """Return this study's copy of a source target, creating it under a free key."""
    candidates = [source_target.key, f"{source_target.study.slug}-{source_target.key}"[:100]]
    for key in candidates:
        existing = TargetPerson.objects.filter(study=study, key=key).first()
        if existing is None:
            person = TargetPerson(
                study=study,
                key=key,
                name=source_target.name,
                aliases=list(source_target.aliases),
                group=source_target.group,
                wikipedia_url=source_target.wikipedia_url,
                profile=dict(source_target.profile),
            )
            person.full_clean(validate_constraints=False)
            person.save()
            tally.targets_created += 1
            return person
        if existing.name.casefold() == source_target.name.casefold() and (
            existing.group == source_target.group
        ):
            tally.targets_reused += 1
            return existing
    raise ValidationError(
        f"target key {source_target.key!r} is taken here by other persons; rename one"
    )


@transaction.atomic
def descriptions_take_from_sources(*, study: Study) -> TakeTally:
    """Copy the source studies' new descriptions (and their targets) into `study`."""
    tally = TakeTally()
    targets: dict[int, TargetPerson] = {}
    for source in pending_source_descriptions(study):
        target = targets.get(source.target_id)
        if target is None:
            target = targets[source.target_id] = _target_for(study, source.target, tally)
        Description.objects.create(
            study=study,
            target=target,
            text=source.text,
            source=source,
            external_id=f"{source.study.slug}-{source.pk}"[:100],
            provenance={
                "source_study": source.study.slug,
                "source_description_id": source.pk,
                "writer_pid": source.writer.prolific_pid if source.writer else "",
            },
            # The writer's telemetry and flags travel with the text (shown on review).
            telemetry=source.telemetry,
            flags=source.flags,
            flag_review=source.flag_review,
            flag_review_reason=source.flag_review_reason,
        )
        tally.descriptions_created += 1
    if tally.targets_created:
        # A new person can be a better match for a guess already made.
        judgments_rescore(study=study)
    return tally

"""A study as the rehearsal copies it: settings, rules, persons, released texts, Prolific terms.

`study_bundle` reads it from the configured database into plain JSON; `bundle_load` writes
it into the rehearsal's throwaway database (another process, see `runner.py`), so nothing the
rehearsal does can reach the real study. Only what participants see is copied of the texts:
the released anonymizations (and each one's description, which scoring needs for the
person, never shown).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from intruder.models import AnonymizedText, Description, Study, TargetPerson
from intruder.services.studies import EDITABLE_FIELDS

# Settings a copy must not take over: the real study's Prolific ID and its open door.
NOT_COPIED = frozenset({"prolific_study_id", "is_open"})
BUNDLE_VERSION = 1


class BundleError(ValueError):
    """The study cannot be rehearsed as it is."""


def study_bundle(study: Study) -> dict[str, Any]:
    """Return what the rehearsal copies of `study`, as JSON-ready data."""
    if study.kind != Study.Kind.INTRUDER:
        raise BundleError(f"{study.slug} is a description collection; rehearse an intruder test")
    texts = list(
        AnonymizedText.objects.filter(
            description__study=study, status=AnonymizedText.Status.RELEASED
        )
        .select_related("description__target")
        .order_by("pk")
    )
    if not texts:
        raise BundleError(f"{study.slug} has no released texts: release some before rehearsing")
    settings = {name: getattr(study, name) for name in EDITABLE_FIELDS if name not in NOT_COPIED}
    settings.pop("source_studies", None)
    settings["exclusion_rules"] = study.exclusion_rules or {}
    prolific = getattr(study, "prolific", None)
    persons = {t.description.target for t in texts}
    return {
        "version": BUNDLE_VERSION,
        "slug": study.slug,
        "settings": settings,
        "targets": [
            {
                "key": p.key,
                "name": p.name,
                "group": p.group,
                "aliases": list(p.aliases or []),
                "catch": p.catch,
            }
            for p in sorted(persons, key=lambda p: p.key)
        ],
        "texts": [
            {
                "target": t.description.target.key,
                "description": t.description.text,
                "text": t.text,
                "spans": t.spans,
                "method": t.method,
            }
            for t in texts
        ],
        "prolific": {
            "reward_minor": getattr(prolific, "reward_minor", 0) or 150,
            "estimated_minutes": getattr(prolific, "estimated_minutes", 0) or 10,
        },
    }


def bundle_load(bundle: dict[str, Any]) -> Study:
    """Create the bundle's study (open, owned by a rehearsal account) and return it."""
    if bundle.get("version") != BUNDLE_VERSION:
        raise BundleError("the study bundle is of another version")
    owner = get_user_model().objects.create_user(username="rehearsal", password=None)
    settings = dict(bundle["settings"])
    rules = settings.pop("exclusion_rules", {})
    study = Study(owner=owner, slug=bundle["slug"], is_open=True, **settings)
    study.exclusion_rules = rules
    study.full_clean()
    study.save()
    targets = {
        row["key"]: TargetPerson.objects.create(
            study=study,
            key=row["key"],
            name=row["name"],
            group=row["group"],
            aliases=row["aliases"],
            catch=row.get("catch", False),
        )
        for row in bundle["targets"]
    }
    for row in bundle["texts"]:
        description = Description.objects.create(
            study=study, target=targets[row["target"]], text=row["description"]
        )
        AnonymizedText.objects.create(
            description=description,
            text=row["text"],
            spans=row["spans"],
            method=row["method"],
            status=AnonymizedText.Status.RELEASED,
        )
    return study

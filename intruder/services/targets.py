"""Target persons: fictitious persons created from generated profiles (`intruder.profiles`)."""

from __future__ import annotations

from django.db import transaction

from intruder.models import PersonGroup, Study, TargetPerson
from intruder.profiles import fictitious_profile_generate


def fictitious_target_create(*, study: Study, key: str, seed: int) -> TargetPerson:
    """Create a fictitious target person in `study` from the profile generated with `seed`."""
    profile = fictitious_profile_generate(seed=seed)
    target = TargetPerson(
        study=study,
        key=key,
        name=profile["full_name"],
        aliases=[],
        group=PersonGroup.FICTITIOUS,
        profile=profile,
    )
    target.full_clean()
    target.save()
    return target


@transaction.atomic
def fictitious_targets_create(
    *, study: Study, count: int, seed: int, key_prefix: str = "fictitious_"
) -> list[TargetPerson]:
    """Create `count` fictitious targets keyed `<prefix>1..count`, seeded `seed`, `seed+1`, ..."""
    return [
        fictitious_target_create(study=study, key=f"{key_prefix}{i}", seed=seed + i - 1)
        for i in range(1, count + 1)
    ]

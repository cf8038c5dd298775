"""Target persons: generated profiles for fictitious persons (Faker, seeded)."""

from __future__ import annotations

import random

from django.db import transaction
from faker import Faker

from intruder.models import PersonGroup, Study, TargetPerson

RELATIONSHIP_STATUSES = (
    "single",
    "in a relationship",
    "engaged",
    "married",
    "divorced",
    "separated",
    "widowed",
)
# English-speaking locales keep names and jobs readable for a UK/US crowd; the person lives in
# the locale's country, so name and country fit together (Faker's full country list includes
# entries such as "Antarctica (the territory South of 60 deg S)").
PROFILE_LOCALES = ("en_GB", "en_US", "en_IE", "en_AU", "en_CA", "en_NZ")


def fictitious_profile_generate(*, seed: int) -> dict:
    """Return a made-up person profile; the same seed always gives the same profile.

    Keys: full_name, first_name, last_name, relationship_status, job, age, country.
    """
    rng = random.Random(seed)
    fake = Faker(rng.choice(PROFILE_LOCALES))
    fake.seed_instance(seed)
    first_name = fake.first_name()
    last_name = fake.last_name()
    return {
        "full_name": f"{first_name} {last_name}",
        "first_name": first_name,
        "last_name": last_name,
        "relationship_status": rng.choice(RELATIONSHIP_STATUSES),
        "job": fake.job(),
        "age": rng.randint(19, 78),
        "country": fake.current_country(),
    }


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

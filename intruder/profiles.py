"""Made-up persons' profiles (Faker, seeded): the fictitious targets' (`services.targets`) and
the catch trials' (`evidence.catch_trials`). Pure, so that both may use it."""

from __future__ import annotations

import random

from faker import Faker

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

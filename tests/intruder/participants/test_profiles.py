"""Fictitious target profiles generated with Faker, seeded."""

import pytest

from intruder.models import PersonGroup
from intruder.profiles import fictitious_profile_generate
from intruder.services.targets import fictitious_target_create, fictitious_targets_create
from tests.intruder.factories import make_study

PROFILE_KEYS = {"full_name", "relationship_status", "job", "age", "country"}


def test_same_seed_gives_the_same_profile():
    assert fictitious_profile_generate(seed=42) == fictitious_profile_generate(seed=42)


def test_different_seeds_give_different_people():
    names = {fictitious_profile_generate(seed=seed)["full_name"] for seed in range(20)}
    assert len(names) >= 18


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_profile_has_every_field_the_writer_page_shows(seed):
    profile = fictitious_profile_generate(seed=seed)
    assert profile.keys() >= PROFILE_KEYS
    assert all(profile[key] for key in PROFILE_KEYS)
    assert 18 <= profile["age"] <= 80
    assert profile["full_name"] == f"{profile['first_name']} {profile['last_name']}"


@pytest.mark.django_db
def test_fictitious_target_carries_its_profile_and_name():
    study = make_study()
    target = fictitious_target_create(study=study, key="fictitious_1", seed=3)
    assert target.group == PersonGroup.FICTITIOUS
    assert target.profile == fictitious_profile_generate(seed=3)
    assert target.name == target.profile["full_name"]


@pytest.mark.django_db
def test_fictitious_targets_are_keyed_and_seeded_in_sequence():
    study = make_study()
    targets = fictitious_targets_create(study=study, count=3, seed=10)
    assert [t.key for t in targets] == ["fictitious_1", "fictitious_2", "fictitious_3"]
    assert [t.profile for t in targets] == [
        fictitious_profile_generate(seed=s) for s in (10, 11, 12)
    ]

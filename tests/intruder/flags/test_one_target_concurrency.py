"""The one-target-per-intruder rule under real concurrency (PostgreSQL; SQLite: direct tests
in test_telemetry_and_flags.py): participants and their second tabs race for texts that
share target persons, and nobody ends up with two texts about one person."""

import random
from collections import Counter

from intruder.models import Assignment, Participant, Study
from intruder.services.assignment import assignment_next
from intruder.services.judgments import judgment_submit
from tests.intruder.factories import (
    make_description,
    make_participant,
    make_study,
    make_target,
    make_text,
)
from tests.races import POSTGRES_RACES, run_threads

pytestmark = POSTGRES_RACES


def test_racing_tabs_never_give_one_intruder_two_texts_about_the_same_person():
    study = make_study(kind=Study.Kind.INTRUDER, judgments_per_text=3, items_per_participant=3)
    for _ in range(4):
        target = make_target(study=study)
        for _ in range(3):  # three descriptions of each person
            make_text(study=study, description=make_description(study=study, target=target))
    participant_ids = [make_participant(study=study).pk for _ in range(6)]

    def work_through(participant_id: int, seed: int) -> None:
        participant = Participant.objects.select_related("study").get(pk=participant_id)
        rng = random.Random(seed)
        while (assignment := assignment_next(participant=participant, rng=rng)) is not None:
            judgment_submit(
                participant=participant,
                assignment_id=assignment.pk,
                self_identified=False,
                other_knowledge="someone",
            )

    # Two threads per participant: their two tabs claim at the same time.
    jobs = [(pid, 2 * i + tab) for i, pid in enumerate(participant_ids) for tab in range(2)]
    assert run_threads(work_through, jobs) == []
    pairs = Counter(
        Assignment.objects.filter(status__in=["active", "completed"]).values_list(
            "participant_id", "text__description__target_id"
        )
    )
    assert pairs and max(pairs.values()) == 1
    assert (
        Counter(Assignment.objects.values_list("participant_id", flat=True)).most_common(1)[0][1]
        <= 3
    )

"""Real concurrency on PostgreSQL: threads enrol at once, race for slots and submit twice.

Runs where DATABASE_URL points at PostgreSQL (CI's second pass); SQLite serialises writers
with a database-wide lock, so there the constraints are tested directly in test_assignment.py.
"""

import random
import threading
from collections import Counter

from intruder.enrolment import EnrolmentRefused
from intruder.models import Assignment, Judgment, Participant, PersonGroup, Study
from intruder.services.assignment import assignment_next
from intruder.services.judgments import judgment_submit
from intruder.services.participants import participant_consent_give, participant_enroll
from tests.intruder.factories import make_participant, make_study, make_text, make_texts
from tests.races import POSTGRES_RACES, run_threads

pytestmark = POSTGRES_RACES

PARTICIPANTS = 16
TEXTS = 10
JUDGMENTS_PER_TEXT = 2
ITEMS = 3


def test_racing_participants_never_over_assign_nor_lose_or_duplicate_judgments():
    study = make_study(
        kind=Study.Kind.INTRUDER,
        judgments_per_text=JUDGMENTS_PER_TEXT,
        items_per_participant=ITEMS,
    )
    texts = [make_text(study=study) for _ in range(TEXTS)]
    participant_ids = [make_participant(study=study).pk for _ in range(PARTICIPANTS)]
    submitted = Counter()
    lock = threading.Lock()

    def work_through(participant_id: int, seed: int) -> None:
        participant = Participant.objects.select_related("study").get(pk=participant_id)
        rng = random.Random(seed)
        while (assignment := assignment_next(participant=participant, rng=rng)) is not None:
            result = judgment_submit(
                participant=participant,
                assignment_id=assignment.pk,
                self_identified=False,
                other_knowledge=f"seen by {participant_id}",
            )
            with lock:
                submitted[participant_id] += int(result.created)

    errors = run_threads(work_through, [(pid, i) for i, pid in enumerate(participant_ids)])
    assert errors == []

    held = Counter(
        Assignment.objects.filter(status__in=["active", "completed"]).values_list(
            "text_id", flat=True
        )
    )
    assert max(held.values()) <= JUDGMENTS_PER_TEXT
    # Demand (16 x 3) exceeds supply (10 x 2): every slot ends up judged, exactly once.
    assert Judgment.objects.count() == TEXTS * JUDGMENTS_PER_TEXT == sum(submitted.values())
    per_text = Counter(Judgment.objects.values_list("text_id", flat=True))
    assert set(per_text) == {t.pk for t in texts}
    assert set(per_text.values()) == {JUDGMENTS_PER_TEXT}
    pairs = list(Judgment.objects.values_list("participant_id", "text_id"))
    assert len(pairs) == len(set(pairs))
    assert all(count <= ITEMS for count in submitted.values())
    assert not Assignment.objects.filter(status="active").exists()


def test_the_same_judgment_submitted_from_two_tabs_at_once_is_stored_once():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=8)
    for _ in range(8):
        make_text(study=study)
    participant = make_participant(study=study)
    assignment_ids = []
    while (assignment := assignment_next(participant=participant)) is not None:
        assignment_ids.append(assignment.pk)
        Assignment.objects.filter(pk=assignment.pk).update(status="completed")
    Assignment.objects.filter(pk__in=assignment_ids).update(status="active")
    created = Counter()
    lock = threading.Lock()

    def submit(assignment_id: int, tab: int) -> None:
        result = judgment_submit(
            participant=Participant.objects.select_related("study").get(pk=participant.pk),
            assignment_id=assignment_id,
            self_identified=tab == 0,
            guessed_name="Someone" if tab == 0 else "",
            revealing_text="tab 0" if tab == 0 else "",
            other_knowledge="tab 1" if tab == 1 else "",
        )
        with lock:
            created[assignment_id] += int(result.created)

    errors = run_threads(submit, [(aid, tab) for aid in assignment_ids for tab in (0, 1)])
    assert errors == []
    assert Judgment.objects.count() == len(assignment_ids)
    assert all(created[aid] == 1 for aid in assignment_ids)
    for judgment in Judgment.objects.all():
        # Whichever tab won, its answers are intact (never a mix of the two).
        if judgment.self_identified:
            assert (judgment.revealing_text, judgment.other_knowledge) == ("tab 0", "")
        else:
            assert (judgment.revealing_text, judgment.other_knowledge) == ("", "tab 1")


def test_a_crowd_enrolling_at_the_same_moment_is_balanced_over_the_groups():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=3)
    for group in PersonGroup.values:
        make_texts(study=study, count=4, group=group)

    def enrol(index: int) -> None:
        # The group is chosen at enrolment, under the study's lock.
        enrolment = participant_enroll(
            study=Study.objects.get(pk=study.pk), prolific_pid=f"RACE{index:04d}"
        )
        participant_consent_give(participant=enrolment.participant)

    errors = run_threads(enrol, [(i,) for i in range(18)])
    assert errors == []
    groups = Counter(Participant.objects.filter(study=study).values_list("group", flat=True))
    assert groups == {group: 6 for group in PersonGroup.values}


def test_a_burst_of_12_on_room_for_4_admits_4_and_refuses_8_before_consent():
    # The audit: 12 enrolled onto room for 4, leaving 4 with nothing to do after consenting.
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2)
    make_texts(study=study, count=4, group=PersonGroup.FAMOUS)  # 8 slots = 4 people x 2
    outcomes = Counter()
    lock = threading.Lock()

    def enrol(index: int) -> None:
        try:
            participant_enroll(
                study=Study.objects.get(pk=study.pk), prolific_pid=f"BURST{index:04d}"
            )
            outcome = "admitted"
        except EnrolmentRefused as refusal:
            outcome = refusal.code
        with lock:
            outcomes[outcome] += 1

    errors = run_threads(enrol, [(i,) for i in range(12)])
    assert errors == []
    assert outcomes == {"admitted": 4, EnrolmentRefused.FULL: 8}
    # Every admitted participant finds their two texts.
    for participant in Participant.objects.filter(study=study).select_related("study"):
        participant_consent_give(participant=participant)
        for _ in range(2):
            assignment = assignment_next(participant=participant)
            assert assignment is not None
            judgment_submit(
                participant=participant,
                assignment_id=assignment.pk,
                self_identified=False,
                other_knowledge="x",
            )
    assert Judgment.objects.count() == 8

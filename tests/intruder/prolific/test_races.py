"""Real concurrency on PostgreSQL: the same delivery from many threads, double-clicked pays."""

from __future__ import annotations

import threading
from collections import Counter
from decimal import Decimal

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from intruder.models import Assignment, Participant, PersonGroup, Study
from intruder.prolific.models import ProlificWebhookEvent
from intruder.prolific.services import bonuses_pay
from intruder.services.participants import participant_current_step
from tests.intruder.factories import make_participant, make_study, make_texts
from tests.races import POSTGRES_RACES, run_threads

pytestmark = POSTGRES_RACES

PROLIFIC_STUDY = "64f0c0ffee0000000000beef"


def test_one_event_delivered_by_8_threads_at_once_is_applied_once(prolific_settings, fake_prolific):
    study = make_study(kind=Study.Kind.INTRUDER, prolific_study_id=PROLIFIC_STUDY)
    make_texts(study=study, count=3, group=PersonGroup.FAMOUS)
    holder = make_participant(
        study=study,
        prolific_pid="PIDRACE",
        group=PersonGroup.FAMOUS,
        consented_at=timezone.now(),
        instructions_seen_at=timezone.now(),
    )
    assert participant_current_step(participant=holder).assignment is not None
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDRACE")
    event = fake_prolific.submission_set_status(sub, "RETURNED")
    outcomes = Counter()
    lock = threading.Lock()

    def deliver(_: int) -> None:
        delivery = fake_prolific.delivery(event)
        headers = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in delivery.headers.items()}
        headers.pop("HTTP_CONTENT_TYPE")
        response = Client().post(
            reverse("prolific-webhook"), delivery.body, content_type="application/json", **headers
        )
        with lock:
            outcomes[(response.status_code, response.json().get("outcome"))] += 1

    assert run_threads(deliver, [(i,) for i in range(8)]) == []
    assert outcomes == {(200, "applied"): 1, (200, "duplicate"): 7}
    assert ProlificWebhookEvent.objects.count() == 1
    holder.refresh_from_db()
    assert holder.status == Participant.Status.RETURNED
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()


def test_a_bonus_sent_from_4_tabs_at_once_is_paid_once(
    prolific_settings, fake_prolific, client_for
):
    study = make_study(kind=Study.Kind.INTRUDER, prolific_study_id=PROLIFIC_STUDY)
    fake_prolific.studies[PROLIFIC_STUDY] = {"id": PROLIFIC_STUDY, "status": "ACTIVE"}
    amounts = {"PID1": Decimal("0.50"), "PID2": Decimal("1.00")}
    for pid in amounts:  # Prolific pays bonuses to the study's own submissions only
        fake_prolific.submission_start(PROLIFIC_STUDY, pid)

    def pay(_: int) -> None:
        bonuses_pay(
            study=Study.objects.get(pk=study.pk), client=client_for(), amounts=amounts, label="b"
        )

    assert run_threads(pay, [(i,) for i in range(4)]) == []
    assert sorted(pid for _, pid, _ in fake_prolific.payments) == ["PID1", "PID2"]


def test_two_admins_approving_two_claims_on_one_id_at_once_give_one_owner(
    prolific_settings, fake_prolific
):
    """Issue 47: two accounts asked for one workspace study; two administrators approve both
    requests at the same instant: one owner, one holder, the other told why (never a 500)."""
    from django.core.exceptions import ValidationError

    from intruder.prolific.claims import claim_approve
    from intruder.prolific.models import ProlificStudyClaim
    from intruder.services.studies import study_update
    from tests.intruder.factories import make_user

    contested = fake_prolific.study_add_foreign()
    fake_prolific.studies[contested]["workspace"] = fake_prolific.workspace_id
    studies = [make_study(slug=f"rival-{i}") for i in range(4)]
    for study in studies:
        study_update(study=study, prolific_study_id=contested)
    claims = list(ProlificStudyClaim.objects.filter(prolific_study_id=contested))
    admins = [make_user(username=f"admin-{i}", is_staff=True) for i in range(len(claims))]
    outcomes = Counter()
    lock = threading.Lock()

    def approve(index: int) -> None:
        try:
            claim_approve(claim=claims[index], by=admins[index])
            outcome = "approved"
        except ValidationError:
            outcome = "refused"
        with lock:
            outcomes[outcome] += 1

    assert run_threads(approve, [(i,) for i in range(len(claims))]) == []
    assert outcomes == {"approved": 1, "refused": len(claims) - 1}
    assert ProlificStudyClaim.objects.filter(approved_at__isnull=False).count() == 1
    assert Study.objects.filter(prolific_study_id=contested).count() == 1

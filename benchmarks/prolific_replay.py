"""Prolific replay: scripted participants + the fake Prolific's webhooks, checked for invariants.

    nice -n 10 python benchmarks/prolific_replay.py --events 10000 --out benchmarks/results/x.json

Everything runs on loopback in one process: a throwaway SQLite database (or DATABASE_URL),
the platform's WSGI app on a threaded server (the webhook endpoint receives real HTTP), and
the fake Prolific (`intruder.prolific.fake_server`) that the platform's client calls.

Participants arrive one after another (at most --concurrency at once) until every judgment
slot is judged, as Prolific keeps recruiting until places are filled. Each takes a place on
the fake Prolific (an ACTIVE submission), enrols through the same checks as the entry page
(Prolific must know the submission), consents and judges texts; --return-share of them return
the study on Prolific while holding a text, and then try to re-join with the same PID.

Meanwhile the fake sends --events webhook deliveries: every real event (delayed at random, so
some arrive out of order), plus duplicates of sent events (same X-Event-ID), stale copies
(older X-Timestamp), deliveries with bad signatures (forged or tampered), and events of other
studies and unknown types. At the end: approvals, and identification bonuses paid three times
over with injected gateway errors. Then three attacks (issue 37): --crashes bonus rounds in
which the paying process dies between Prolific's set-up and pay and the researcher pays
again; a second researcher's account tries every Prolific action and webhook on the
study from a study of its own; and, beside the real traffic, an attacker sends --replays
accepted deliveries again as soon as it records them (inside the signed timestamp's window)
under a new X-Event-ID and a far-future X-Timestamp (the headers the signature does not
cover).

Writes {events, duplicate_participants, orphaned_slots, max_minus_min_judgments_per_text,
reissue_seconds_p95, bad_signature_accepted, double_payments, crash_double_payments,
cross_study_effects, replays_applied} and the details behind them. Exits 2 when it measured
nothing (no participant enrolled, no judgment, no return, no crash, no replay reaching the
deduplication), 1 when a target is missed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import platform
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MAX_DELIVERY_ATTEMPTS = 5  # a delivery without a 2xx answer is sent again, as Prolific does
sys.path.insert(0, str(REPO))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000, help="Webhook deliveries to send.")
    parser.add_argument("--out", type=Path, required=True)
    # 72 texts x 3 judgments and half the participants returning: about 50 returns, the
    # number the reissue target asks for.
    parser.add_argument("--texts", type=int, default=72)
    parser.add_argument("--judgments-per-text", type=int, default=3)
    parser.add_argument("--items", type=int, default=3, help="Texts per participant.")
    parser.add_argument("--return-share", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=6, help="Participants at once.")
    parser.add_argument("--senders", type=int, default=4, help="Webhook sender threads.")
    parser.add_argument("--max-participants", type=int, default=400)
    parser.add_argument("--max-delay", type=float, default=1.5, help="Delivery delay (s).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=900, help="Stop after (s).")
    parser.add_argument("--crashes", type=int, default=20, help="Crashes between set-up and pay.")
    parser.add_argument("--replays", type=int, default=50, help="Replays with altered headers.")
    parser.add_argument(
        "--min-returns", type=int, default=50, help="Returns needed to judge the reissue p95."
    )
    return parser.parse_args()


def setup_django(tmp: Path) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp / 'replay.sqlite3'}")
    import django

    django.setup()
    import logging

    # Thousands of refused and unknown deliveries are logged as warnings by design.
    logging.getLogger("intruder.prolific").setLevel(logging.ERROR)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


class Deliveries:
    """Delayed-delivery queues drained by sender threads that POST to the webhook URL.

    Two lanes: the study's real events have their own senders, as Prolific delivers each
    event on its own rather than behind another study's traffic; the noise (duplicates, stale
    copies, forgeries, other studies) has `senders` threads of its own. Accepted real
    deliveries are kept (`captured`) for the replay attack at the end.
    """

    def __init__(self, fake, url: str, senders: int) -> None:
        import httpx

        self.fake, self.url = fake, url
        self.heaps: dict[str, list] = {"real": [], "noise": []}
        self.cond = threading.Condition()
        self.seq = 0  # deliveries (events sent), not counting retries
        self.order = 0
        self.retried = Counter()
        self.latencies: list[float] = []  # seconds per webhook request
        self.late: dict[str, list[float]] = {"real": [], "noise": []}  # due -> answered
        self.sent = Counter()
        self.accepted = Counter()
        self.statuses = Counter()
        self.errors: list[str] = []
        self.closed = False
        self.ack_times: dict[str, datetime] = {}  # event id -> first 2xx time
        self.captured: list = []  # accepted real deliveries, as an attacker could record them
        lanes = ["real"] * 2 + ["noise"] * senders
        self.http = [httpx.Client(timeout=30) for _ in lanes]
        self.threads = [
            threading.Thread(target=self._run, args=(i, lane), daemon=True)
            for i, lane in enumerate(lanes)
        ]
        for t in self.threads:
            t.start()

    @staticmethod
    def lane(kind: str) -> str:
        return "real" if kind == "real" else "noise"

    def put(self, delivery, kind: str, delay: float = 0.0, attempt: int = 1) -> None:
        with self.cond:
            if attempt == 1:
                self.seq += 1
            self.order += 1
            due = time.monotonic() + delay
            heapq.heappush(self.heaps[self.lane(kind)], (due, self.order, delivery, kind, attempt))
            self.cond.notify_all()

    def _run(self, index: int, lane: str) -> None:
        from django.db import connections

        http, heap = self.http[index], self.heaps[lane]
        while True:
            with self.cond:
                while not heap or heap[0][0] > time.monotonic():
                    if self.closed and not heap:
                        connections.close_all()
                        return
                    wait = heap[0][0] - time.monotonic() if heap else 0.2
                    self.cond.wait(timeout=max(0.001, min(wait, 0.2)))
                due, _, delivery, kind, attempt = heapq.heappop(heap)
            sent_at = time.monotonic()
            try:
                status = self.fake.send(delivery, self.url, http=http)
                with self.cond:
                    self.latencies.append(time.monotonic() - sent_at)
                    self.late[lane].append(time.monotonic() - due)
            except Exception as error:  # Prolific retries a delivery that got no answer
                status = 0
                self.errors.append(f"{kind}: {error!r}")
            if (status == 0 or status >= 500) and attempt < MAX_DELIVERY_ATTEMPTS:
                with self.cond:
                    self.retried[kind] += 1
                self.put(self.fake.delivery_again(delivery), kind, 2.0**attempt, attempt + 1)
                continue
            with self.cond:
                if sum(self.sent.values()) % 1000 == 999:
                    print(f"{sum(self.sent.values()) + 1} deliveries sent", file=sys.stderr)
                self.sent[kind] += 1
                self.statuses[(kind, status)] += 1
                if status < 300:
                    self.accepted[kind] += 1
                    self.ack_times.setdefault(delivery.event_id, datetime.now(UTC))
                    if kind == "real":
                        self.captured.append(delivery)

    def drain(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        for t in self.threads:
            t.join()

    @property
    def total(self) -> int:
        return self.seq


def main() -> None:
    args = parse_args()
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="prolific_replay_"))
    setup_django(tmp)

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connections
    from django.db.models import Count, Q

    from intruder.enrolment import EnrolmentRefused
    from intruder.evidence.flags import exclusion_rules_set
    from intruder.models import (
        AnonymizedText,
        Assignment,
        Description,
        Judgment,
        Participant,
        Study,
        TargetPerson,
    )
    from intruder.prolific.bonuses import bonus_select
    from intruder.prolific.client import ProlificClient
    from intruder.prolific.fake_server import FakeProlific, new_id
    from intruder.prolific.models import ProlificWebhookEvent
    from intruder.prolific.services import (
        bonuses_pay,
        study_draft_create,
        study_sync,
        study_transition,
        submissions_review,
    )
    from intruder.prolific.webhooks import submission_known
    from intruder.rehearsal.sites import EmbeddedSite
    from intruder.services.judgments import judgment_submit
    from intruder.services.participants import (
        participant_complete,
        participant_consent_give,
        participant_current_step,
        participant_enroll,
        participant_instructions_confirm,
    )

    # --- the fake Prolific and the platform on loopback ------------------------------------
    real_events: list[dict] = []
    deliveries: Deliveries | None = None

    class ReplayProlific(FakeProlific):
        def _event(self, event_type, resource):
            event = super()._event(event_type, resource)
            real_events.append(event)
            if deliveries is not None:  # every real event, delayed at random (reordering)
                deliveries.put(self.delivery(event), "real", rng.uniform(0, args.max_delay))
            return event

    fake = ReplayProlific()
    fake.serve()
    fake._secret_create({})
    settings.PROLIFIC_API_TOKEN = fake.token
    settings.PROLIFIC_API_URL = fake.base_url
    settings.PROLIFIC_WEBHOOK_SECRET = fake.webhook_secret
    settings.PROLIFIC_WORKSPACE_ID = fake.workspace_id

    server = EmbeddedSite()  # the rehearsal's: Django's threaded server, quiet, no Nagle
    server.start({})
    webhook_url = f"{server.url}/prolific/webhook/"
    import httpx

    # Warm up: the first request imports the whole URLconf (tens of seconds on a busy
    # machine); a deployed server has done that long before Prolific's first event.
    warm = time.monotonic()
    assert httpx.get(webhook_url, timeout=300).status_code == 405
    warmup_s = time.monotonic() - warm

    # --- the study --------------------------------------------------------------------------
    owner = get_user_model().objects.create_user(username="replay", password="x" * 12)
    study = Study.objects.create(
        slug="replay",
        title="Replay",
        kind=Study.Kind.INTRUDER,
        owner=owner,
        is_open=True,  # studies start closed (issue 26): a closed one refuses everyone
        consent_text="You agree to take part in a replayed study.",
        items_per_participant=args.items,
        judgments_per_text=args.judgments_per_text,
        groups=["famous"],
    )
    # Exclusion rules recorded before launch that leave the scripted participants' answers in
    # (they send no telemetry and answer in milliseconds, which the default rules exclude):
    # the bonus must then pay them, so "nobody ineligible paid" is not won by paying nobody.
    exclusion_rules_set(study=study, exclude=[], thresholds={})
    names = {}
    for i in range(args.texts):
        target = TargetPerson.objects.create(
            study=study, key=f"t{i}", name=f"Person Number{i}", group="famous"
        )
        description = Description.objects.create(study=study, target=target, text=f"Text {i}.")
        text = AnonymizedText.objects.create(
            description=description, text=f"[PERSON] wrote text {i}.", status="released"
        )
        names[text.pk] = target.name
    client = ProlificClient(token=fake.token, base_url=fake.base_url, backoff=0.05)
    study_draft_create(
        study=study,
        client=client,
        entry_url="http://127.0.0.1/s/replay/",
        places=max(1, args.max_participants),
        reward_minor=100,
        estimated_minutes=10,
    )
    study_transition(study=study, client=client, action="publish")
    study.refresh_from_db()
    prolific_study_id = study.prolific_study_id
    deliveries = Deliveries(fake, webhook_url, args.senders)
    slots = args.texts * args.judgments_per_text

    # --- scripted participants --------------------------------------------------------------
    lock = threading.Lock()
    returns: list[dict] = []  # {text_id, slot, returned_at (monotonic), event_id}
    rejoin_problems: list[str] = []
    outcomes = Counter()
    stop = threading.Event()

    def all_judged() -> bool:
        return Judgment.objects.filter(text__description__study=study).count() >= slots

    def participant(index: int) -> None:
        try:
            _participant(index)
        finally:
            connections.close_all()

    def _participant(index: int) -> None:
        local = random.Random(args.seed * 100_003 + index)
        pid = f"{index:024x}"
        session = fake.submission_start(prolific_study_id, pid)
        fresh = Study.objects.get(pk=study.pk)
        try:
            enrolment = participant_enroll(
                study=fresh,
                prolific_pid=pid,
                prolific_study_id=prolific_study_id,
                prolific_session_id=session,
                admit_known=lambda: submission_known(
                    study=fresh, prolific_pid=pid, session_id=session
                ),
            )
        except EnrolmentRefused as refusal:
            with lock:
                outcomes[f"refused_{refusal.code}"] += 1
            fake.submission_set_status(session, "RETURNED")  # they return it on Prolific
            return
        p = enrolment.participant
        participant_consent_give(participant=p)
        participant_instructions_confirm(participant=p)
        returner = local.random() < args.return_share
        return_at = local.randrange(args.items)
        for k in range(args.items):
            p.refresh_from_db()
            step = participant_current_step(participant=p)
            if step.assignment is None:
                break
            time.sleep(local.uniform(0.005, 0.03))  # reading
            if returner and k == return_at:
                event = fake.submission_set_status(session, "RETURNED")
                with lock:
                    returns.append(
                        {
                            "text_id": step.assignment.text_id,
                            "slot": step.assignment.slot,
                            "returned_at": datetime.now(UTC),
                            "event_id": event["event_id"],
                            "pid": pid,
                        }
                    )
                    outcomes["returned"] += 1
                # The same person opens the link again once Prolific's event is in: no second
                # place, nothing held.
                deadline = time.monotonic() + 60
                while event["event_id"] not in deliveries.ack_times:
                    if time.monotonic() > deadline:
                        rejoin_problems.append(f"{pid}: RETURNED not delivered in 60 s")
                        return
                    time.sleep(0.05)
                try:
                    again = participant_enroll(
                        study=Study.objects.get(pk=study.pk),
                        prolific_pid=pid,
                        prolific_study_id=prolific_study_id,
                        prolific_session_id=session,
                    )
                    again_p = again.participant
                    held = again_p.assignments.filter(status=Assignment.Status.ACTIVE).count()
                    if again.created or again_p.pk != p.pk:
                        rejoin_problems.append(f"{pid}: second participant")
                    elif held:
                        rejoin_problems.append(f"{pid}: holds {held} text(s) after returning")
                    elif participant_current_step(participant=again_p).assignment is not None:
                        rejoin_problems.append(f"{pid}: got a text after returning")
                except EnrolmentRefused:
                    pass
                return
            guess = names[step.assignment.text_id] if local.random() < 0.3 else ""
            judgment_submit(
                participant=p,
                assignment_id=step.assignment.pk,
                self_identified=bool(guess),
                guessed_name=guess,
                revealing_text="the dates" if guess else "",
                other_knowledge="" if guess else "a writer",
            )
        p.refresh_from_db()
        if participant_complete(participant=p):
            fake.submission_set_status(session, "AWAITING REVIEW")
            with lock:
                outcomes["completed"] += 1

    # --- noise: duplicates, stale copies, bad signatures, other studies ---------------------
    def noise() -> None:
        other_study = new_id()
        while deliveries.total < args.events and not stop.is_set():
            if len(real_events) < 3 or len(deliveries.heaps["noise"]) > 4 * args.senders:
                time.sleep(0.005)  # keep pace with the senders: no unbounded backlog
                continue
            roll = rng.random()
            event = rng.choice(real_events)
            if roll < 0.40:  # Prolific's retry of a delivered event: same X-Event-ID
                deliveries.put(fake.delivery(event), "duplicate", rng.uniform(0, args.max_delay))
            elif roll < 0.55:  # an older state under a new event ID, delivered late
                stale = {
                    "event_id": new_id(),
                    "occurred_at": (
                        datetime.fromisoformat(event["occurred_at"]) - timedelta(minutes=5)
                    ).isoformat(),
                    "payload": {**event["payload"], "status": "ACTIVE"},
                }
                deliveries.put(fake.delivery(stale), "stale", rng.uniform(0, args.max_delay))
            elif roll < 0.70:  # forged: a RETURNED for someone, signed with a wrong secret
                forged = {
                    "event_id": new_id(),
                    "occurred_at": datetime.now(UTC).isoformat(),
                    "payload": {**event["payload"], "status": "RETURNED"},
                }
                if rng.random() < 0.5:
                    bad = fake.delivery(forged, secret="guessed-secret")
                else:  # a valid delivery tampered with on the way
                    bad = fake.delivery(forged)
                    bad.body = bad.body.replace(b'"RETURNED"', b'"TIMED-OUT"')
                deliveries.put(bad, "bad_signature", rng.uniform(0, args.max_delay))
            else:  # another study of the workspace, or an event type we do not handle
                other = {
                    "event_id": new_id(),
                    "occurred_at": datetime.now(UTC).isoformat(),
                    "payload": (
                        {
                            "event_type": "submission.status.change",
                            "resource_id": new_id(),
                            "status": "APPROVED",
                            "participant_id": new_id(),
                            "study_id": other_study,
                        }
                        if rng.random() < 0.5
                        else {"event_type": "study.progress.change", "resource_id": other_study}
                    ),
                }
                deliveries.put(fake.delivery(other), "other", rng.uniform(0, args.max_delay))

    load_before = os.getloadavg()
    started = time.monotonic()
    noise_thread = threading.Thread(target=noise, daemon=True)
    noise_thread.start()
    # Attack 3 runs beside the real traffic: an attacker replays what it records while the
    # signed timestamp is fresh (a replay outside the window is refused before deduplication
    # and tests nothing of the attack).
    replays: dict = {}
    attacker = threading.Thread(
        target=lambda: replays.update(
            replay_while_fresh(deliveries, webhook_url, args.replays, stop)
        ),
        daemon=True,
    )
    attacker.start()
    index = 0
    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        running = []
        while (
            index < args.max_participants
            and time.monotonic() - started < args.time_limit
            and not all_judged()
        ):
            running = [f for f in running if not f.done()]
            if len(running) >= args.concurrency:
                time.sleep(0.05)
                continue
            running.append(pool.submit(participant, index))
            index += 1
            time.sleep(rng.uniform(0.005, 0.03))  # arrivals
        participant_errors = [repr(f.exception()) for f in running if f.exception()]
    participants_s = time.monotonic() - started
    # The noise runs until --events are sent, within the time limit (without participants
    # there are too few real events to copy, and it would wait for ever).
    noise_thread.join(max(0.0, args.time_limit - participants_s))
    stop.set()
    noise_thread.join()
    deliveries.drain()
    webhooks_s = time.monotonic() - started

    attacker.join()

    # --- review and bonuses, retried with lost answers ---------------------------------------
    study_sync(study=study, client=client)
    done = list(
        Participant.objects.filter(study=study, status="completed").values_list(
            "prolific_pid", flat=True
        )
    )
    if done:
        submissions_review(study=study, client=client, pids=done, kind="approve", user=owner)
    ineligible = ineligible_set_up(study=study, pids=done)
    chosen = bonus_select(study=study, per_identified=Decimal("0.50"), label="identified")
    amounts = chosen.amounts
    fake.fail_next(502, times=3)
    for _ in range(3):  # a researcher clicking "pay" again after errors
        bonuses_pay(
            study=study,
            client=client,
            amounts=amounts,
            label="identified",
            user=owner,
            judgments=chosen.judgments,
        )
    paid = Counter((pid, amount) for _, pid, amount in fake.payments)
    payments_per_pid = Counter(pid for _, pid, _ in fake.payments)
    # The same identifications under a second label, then who was paid who must not be.
    again = bonus_select(study=study, per_identified=Decimal("0.50"), label="identified, again")
    before_again = len(fake.payments)
    if again.amounts:
        bonuses_pay(
            study=study,
            client=client,
            amounts=again.amounts,
            label="identified, again",
            user=owner,
            judgments=again.judgments,
        )
    ineligible["paid_again_under_another_label"] = len(fake.payments) - before_again
    ineligible["paid_excluded"] = sum(
        1 for _, pid, _ in fake.payments if pid in ineligible["excluded_pids"]
    )
    ineligible["paid_non_submissions"] = sum(
        1 for _, pid, _ in fake.payments if pid in ineligible["tester_pids"]
    )
    ineligible["not_paid_why"] = dict(
        Counter(c.why_not for c in chosen.candidates if c.prolific_pid not in chosen.amounts)
    )
    ineligible["payments"] = (
        ineligible["paid_again_under_another_label"]
        + ineligible["paid_excluded"]
        + ineligible["paid_non_submissions"]
    )
    double_payments = sum(n - 1 for n in payments_per_pid.values() if n > 1)
    unpaid = sorted(set(amounts) - set(payments_per_pid))

    # --- attack 1: the paying process dies between set-up and pay, then "Pay" again ---------
    crash = crash_rounds(
        study=study, fake=fake, client=client, pids=done[:5], rounds=args.crashes, owner=owner
    )

    # --- attack 2: another researcher's account against this study's Prolific study --------
    cross = cross_study_attempts(
        study=study, fake=fake, client=client, webhook_url=webhook_url, owner=owner
    )

    # --- attack 2b: claims on workspace studies, cleared and changed IDs, a race -----------
    ownership = ownership_attempts(fake=fake, client=client, webhook_url=webhook_url, owner=owner)

    # --- invariants -------------------------------------------------------------------------
    per_pid = Counter(
        Participant.objects.filter(study=study).values_list("prolific_pid", flat=True)
    )
    duplicate_participants = sum(n - 1 for n in per_pid.values() if n > 1) + len(rejoin_problems)
    active = Assignment.objects.filter(participant__study=study, status="active")
    orphaned = active.filter(~Q(participant__status="started")).count()
    orphaned += active.filter(participant__prolific_pid__in=[r["pid"] for r in returns]).count()
    leftover_active = active.count()
    per_text = [
        n
        for n in AnonymizedText.objects.filter(description__study=study)
        .annotate(n=Count("assignments", filter=Q(assignments__status="completed")))
        .values_list("n", flat=True)
    ]
    # Reissue: from the participant's RETURNED on Prolific until their freed judgment slot is
    # handed to someone else. Texts are interchangeable under the balance policy (the next
    # claim goes to a least-held text), so the slot counts as reissued at the first text
    # claim in the study after the release was applied. The exact (text, slot) refill is
    # reported apart: it waits until that text is least-held again (balance, not latency).
    reissue, same_slot, release_lag = [], [], []
    not_reissued = 0
    for r in returns:
        acked = deliveries.ack_times.get(r["event_id"])
        if acked is None:
            not_reissued += 1
            continue
        release_lag.append((acked - r["returned_at"]).total_seconds())
        nxt = (
            Assignment.objects.filter(participant__study=study, assigned_at__gte=acked)
            .exclude(participant__prolific_pid=r["pid"])
            .order_by("assigned_at")
            .first()
        )
        exact = (
            Assignment.objects.filter(
                text_id=r["text_id"], slot=r["slot"], assigned_at__gt=r["returned_at"]
            )
            .order_by("assigned_at")
            .first()
        )
        if exact is not None:
            same_slot.append((exact.assigned_at - r["returned_at"]).total_seconds())
        if nxt is None:
            not_reissued += 1
            continue
        reissue.append((nxt.assigned_at - r["returned_at"]).total_seconds())

    def p95_of(values: list[float]) -> float | None:
        values = sorted(values)
        return round(values[min(len(values) - 1, int(0.95 * len(values)))], 3) if values else None

    def p50_of(values: list[float]) -> float | None:
        return round(sorted(values)[len(values) // 2], 4) if values else None

    p95 = p95_of(reissue)
    forged_stored = ProlificWebhookEvent.objects.filter(
        event_id__in=[e for e in deliveries.ack_times]
    ).count()

    # The scripted participants' own (the tester added for the bonus rules is not one).
    testers = ineligible["tester_pids"]
    judgments = (
        Judgment.objects.filter(text__description__study=study)
        .exclude(participant__prolific_pid__in=testers)
        .count()
    )
    enrolled = Participant.objects.filter(study=study).exclude(prolific_pid__in=testers).count()
    measured_nothing = [
        what
        for what, n in (
            ("no participant enrolled", enrolled),
            ("no judgment", judgments),
            ("no return", len(returns)),
            ("no crash between set-up and pay", crash["crashed"]),
            ("no replay reached the deduplication", replays["outcomes"].get("duplicate", 0)),
            ("no ineligible participant to leave unpaid", ineligible["candidates"]),
            ("no ownership attack", ownership["attempts"]),
        )
        if n == 0
    ]
    reissue_ok = (
        len(returns) >= args.min_returns and p95 is not None and p95 <= 60
    )  # fewer returns than asked: not shown
    checks = {
        "duplicate_participants": duplicate_participants == 0,
        "orphaned_slots": orphaned == 0,
        "max_minus_min_judgments_per_text": bool(per_text) and max(per_text) - min(per_text) <= 1,
        "reissue_seconds_p95": reissue_ok,
        "bad_signature_accepted": deliveries.accepted["bad_signature"] == 0,
        "double_payments": double_payments == 0 and not unpaid,
        "crash_double_payments": crash["double_payments"] == 0 and not crash["unpaid"],
        "cross_study_effects": cross["effects"] == 0,
        "ownership_effects": ownership["effects"] == 0,
        "ineligible_payments": ineligible["payments"] == 0,
        "replays_applied": replays["applied"] == 0,
    }
    result = {
        "events": deliveries.total,
        "duplicate_participants": duplicate_participants,
        "orphaned_slots": orphaned,
        "max_minus_min_judgments_per_text": (max(per_text) - min(per_text)) if per_text else None,
        "reissue_seconds_p95": p95,
        "bad_signature_accepted": deliveries.accepted["bad_signature"],
        "double_payments": double_payments,
        "crash_double_payments": crash["double_payments"],
        "cross_study_effects": cross["effects"],
        "ownership_effects": ownership["effects"],
        "ineligible_payments": ineligible["payments"],
        "replays_applied": replays["applied"],
        "measured_nothing": measured_nothing,
        "targets_missed": [name for name, ok in checks.items() if not ok],
        "details": {
            "deliveries_sent_by_kind": dict(deliveries.sent),
            "deliveries_accepted_by_kind": dict(deliveries.accepted),
            "statuses": {f"{k}:{s}": n for (k, s), n in sorted(deliveries.statuses.items())},
            "delivery_errors": deliveries.errors[:20],
            "real_events": len(real_events),
            "webhook_events_stored": ProlificWebhookEvent.objects.count(),
            "stored_events_acknowledged": forged_stored,
            "participants_started": index,
            "participants_enrolled": enrolled,
            "bonus_crashes": crash,
            "cross_study": cross,
            "ownership": ownership,
            "ineligible": ineligible,
            "replays": replays,
            "outcomes": dict(outcomes),
            "participant_errors": participant_errors[:20],
            "rejoin_problems": rejoin_problems[:20],
            "returned_holding_a_text": len(returns),
            "returned_slots_reissued": len(reissue),
            "returned_slots_not_reissued": not_reissued,
            "reissue_seconds": sorted(round(x, 3) for x in reissue),
            "release_lag_seconds_p95": p95_of(release_lag),
            "same_text_and_slot_refill_seconds": sorted(round(x, 3) for x in same_slot),
            "delivery_retries_by_kind": dict(deliveries.retried),
            "webhook_request_seconds": {
                "p50": p50_of(deliveries.latencies),
                "p95": p95_of(deliveries.latencies),
            },
            "delivery_late_seconds_p95": {
                lane: p95_of(waits) for lane, waits in deliveries.late.items()
            },
            "slots": slots,
            "judgments": judgments,
            "judgments_per_text_min_max": [min(per_text), max(per_text)] if per_text else None,
            "active_assignments_left": leftover_active,
            "bonuses_owed": len(amounts),
            "bonuses_paid": len(payments_per_pid),
            "bonuses_unpaid": unpaid,
            "payments": len(fake.payments),
            "distinct_payments": len(paid),
            "participants_seconds": round(participants_s, 1),
            "server_warmup_seconds": round(warmup_s, 1),
            "total_seconds": round(webhooks_s, 1),
        },
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "environment": {
            "database": settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1],
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "shared_machine": True,
            "load_average_1_5_15_before": [round(x, 1) for x in load_before],
            "load_average_1_5_15_after": [round(x, 1) for x in os.getloadavg()],
            "note": "2-core machine shared with other sessions: timings are upper bounds.",
            "prolific": "fake server on loopback (intruder.prolific.fake_server), API v1",
        },
        "targets": {
            "duplicate_participants": 0,
            "orphaned_slots": 0,
            "max_minus_min_judgments_per_text": "<= 1",
            "reissue_seconds_p95": f"<= 60 with at least {args.min_returns} returns",
            "bad_signature_accepted": 0,
            "double_payments": 0,
            "crash_double_payments": 0,
            "cross_study_effects": 0,
            "ownership_effects": 0,
            "ineligible_payments": 0,
            "replays_applied": 0,
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("details", "config")}))
    server.stop()
    fake.stop()
    if measured_nothing:  # the JSON above says why; the exit status is every benchmark's
        from did_work import NO_WORK_EXIT

        print(f"measured nothing: {', '.join(measured_nothing)}", file=sys.stderr)
        sys.exit(NO_WORK_EXIT)
    if result["targets_missed"]:
        print(f"targets missed: {', '.join(result['targets_missed'])}", file=sys.stderr)
        sys.exit(1)


class Killed(BaseException):
    """The paying process dies: no `except Exception` sees it; open transactions roll back."""


def crash_rounds(*, study, fake, client, pids: list[str], rounds: int, owner) -> dict:
    """Pay a bonus per round while the process dies during the pay call, then pay again.

    Prolific pays the set-up bonus before the answer is lost; the retry (its label in
    another case) must pay that bonus, never set up a second one.
    """
    from decimal import Decimal

    from intruder.prolific.client import ProlificClient
    from intruder.prolific.services import bonuses_pay

    crashed, doubles, unpaid = 0, 0, []
    amounts = {pid: Decimal("0.10") for pid in pids}
    for n in range(rounds if pids else 0):
        before = len(fake.payments)
        dying = ProlificClient(token=client.token, base_url=client.base_url, backoff=0.05)
        real_pay = dying.bonus_pay

        def pay_then_die(bonus_id: str, real_pay=real_pay) -> dict:
            real_pay(bonus_id)
            raise Killed

        dying.bonus_pay = pay_then_die
        try:
            bonuses_pay(study=study, client=dying, amounts=amounts, label=f"crash-{n}", user=owner)
        except Killed:
            crashed += 1
        bonuses_pay(study=study, client=client, amounts=amounts, label=f"CRASH-{n}", user=owner)
        paid = Counter(pid for _, pid, _ in fake.payments[before:])
        doubles += sum(k - 1 for k in paid.values() if k > 1)
        unpaid += [f"{n}:{pid}" for pid in amounts if pid not in paid]
    return {"rounds": rounds, "crashed": crashed, "double_payments": doubles, "unpaid": unpaid}


def ineligible_set_up(*, study, pids: list[str]) -> dict:
    """Make participants a bonus must not pay: one completed identifier whose every answer
    the researcher's review excluded, and a tester who entered with STUDY_ID=local (a
    participant here, no submission of the Prolific study) with an identified answer.

    The tester's assignment is stored released, so it holds no judgment slot and the
    per-text balance the benchmark checks is the participants' own.
    """
    from intruder.models import AnonymizedText, Assignment, Judgment, Participant

    identifiers = list(
        Participant.objects.filter(
            study=study, prolific_pid__in=pids, judgments__identified=True
        ).values_list("prolific_pid", flat=True)
    )
    excluded = sorted(set(identifiers))[:1]
    Judgment.objects.filter(
        participant__study=study, participant__prolific_pid__in=excluded
    ).update(flag_review="confirmed")
    tester = Participant.objects.create(
        study=study, prolific_pid="TESTERLOCAL1", prolific_study_id="local", status="completed"
    )
    text = AnonymizedText.objects.filter(description__study=study).first()
    assignment = Assignment.objects.create(
        participant=tester, text=text, position=1, slot=999, status=Assignment.Status.RELEASED
    )
    Judgment.objects.create(
        assignment=assignment,
        participant=tester,
        text=text,
        self_identified=True,
        guessed_name="A tester's guess",
        other_knowledge="rehearsal",
        identified=True,
    )
    return {
        "excluded_pids": excluded,
        "tester_pids": [tester.prolific_pid],
        "candidates": len(excluded) + 1,
    }


def ownership_attempts(*, fake, client, webhook_url: str, owner) -> dict:
    """Another account against Prolific study IDs it never claimed (issue 47).

    a) a study made on Prolific's site (the token's workspace, no platform study) typed into
       the attacker's study, then every Prolific action from its pages and that study's
       webhooks; b) a draft's ID its owner cleared; c) an ID its owner changed; d) two
       accounts' claims on one ID approved at the same moment. Effects: anything of the
       workspace studies that moved, a foreign ID held by the attacker's study, more than one
       owner of an ID.
    """
    import threading

    import httpx
    from django.contrib.auth import get_user_model
    from django.core.exceptions import ValidationError
    from django.db import connections
    from django.test import Client
    from django.urls import reverse

    from intruder.models import Study
    from intruder.prolific.claims import claim_approve
    from intruder.prolific.models import ProlificStudyClaim, ProlificStudyState
    from intruder.prolific.services import study_draft_create
    from intruder.services.studies import study_update

    users = get_user_model().objects
    claimant = users.create_user(username="claimant", password="z" * 12)
    admin = users.create_superuser(username="site-admin", password="a" * 12)
    mine = Study.objects.create(slug="claimant", title="C", kind="intruder", owner=claimant)
    draft = {
        "name": "n",
        "description": "d",
        "external_study_url": "https://x/?{{%PROLIFIC_PID%}}{{%STUDY_ID%}}{{%SESSION_ID%}}",
        "completion_codes": [{"code": "C"}],
        "total_available_places": 5,
        "reward": 1,
        "estimated_completion_time": 1,
    }

    def remote(study_id: str) -> tuple:
        subs = sorted(
            (s["participant_id"], s["status"])
            for s in fake.submissions.values()
            if s["study_id"] == study_id
        )
        paid = sorted(p for p in fake.payments if p[0] == study_id)
        return (fake.studies[study_id]["status"], subs, paid)

    def victim_draft(slug: str) -> Study:
        victim = Study.objects.create(slug=slug, title=slug, kind="intruder", owner=owner)
        study_draft_create(
            study=victim,
            client=client,
            entry_url=f"http://127.0.0.1/s/{slug}/",
            places=5,
            reward_minor=1,
            estimated_minutes=1,
            user=owner,
        )
        victim.refresh_from_db()
        return victim

    attempts, refused, effects = 0, 0, []

    def take(study_id: str) -> None:
        nonlocal attempts, refused
        attempts += 1
        try:
            study_update(study=Study.objects.get(pk=mine.pk), prolific_study_id=study_id)
        except ValidationError:
            refused += 1
            return
        held = Study.objects.get(pk=mine.pk).prolific_study_id
        refused += held != study_id
        if held == study_id:
            effects.append(f"the claimant's study holds {study_id}")

    # a) a workspace study made on Prolific directly, with a real participant awaiting review
    unlinked = fake._study_create(draft)[1]["id"]
    fake.studies[unlinked]["status"] = "ACTIVE"
    sub = fake.submission_start(unlinked, "REALPERSON01")
    fake.submission_set_status(sub, "AWAITING REVIEW")
    before = remote(unlinked)
    take(unlinked)
    browser = Client()
    browser.force_login(claimant)
    reason = "Rejected from a study that never claimed this Prolific study, so never sent. " * 2
    for name, data in (
        ("researcher-prolific-sync", {}),
        ("researcher-prolific-transition", {"action": "pause"}),
        ("researcher-prolific-review", {"pid": ["REALPERSON01"], "kind": "reject",
                                        "reason": reason, "category": "OTHER"}),
        ("researcher-prolific-bonus", {"per_identified": "5.00", "label": "taken"}),
    ):  # fmt: skip
        attempts += 1
        browser.post(reverse(name, kwargs={"slug": mine.slug}), data)
        refused += remote(unlinked) == before
    fake._study_transition({"action": "PAUSE"}, unlinked)
    events = [fake.events[-1], fake.submission_set_status(sub, "RETURNED")]
    outcomes = Counter()
    with httpx.Client(timeout=30) as http:
        for event in events:
            attempts += 1
            delivery = fake.delivery(event)
            answer = http.post(webhook_url, content=delivery.body, headers=delivery.headers)
            outcome = answer.json().get("outcome", str(answer.status_code))
            outcomes[outcome] += 1
            refused += outcome == "unknown_study"
    if ProlificStudyState.objects.filter(study=mine).exclude(status="").exists():
        effects.append("a workspace study's webhook reached the claimant's study")
    if remote(unlinked)[2] or "REJECTED" in str(remote(unlinked)[1]):
        effects.append("the workspace study was paid or rejected from the claimant's pages")
    # b) a draft's ID its owner cleared (allowed before publishing): reserved for them
    cleared = victim_draft("cleared")
    cleared_id = cleared.prolific_study_id
    study_update(study=cleared, prolific_study_id="")
    take(cleared_id)
    study_update(study=Study.objects.get(pk=cleared.pk), prolific_study_id=cleared_id)
    if Study.objects.get(pk=cleared.pk).prolific_study_id != cleared_id:
        effects.append("the owner could not take a cleared ID back")
    # c) an ID its owner changed: the old one stays theirs; a published one cannot change
    changed = victim_draft("changed")
    old_id = changed.prolific_study_id
    new_id_ = fake._study_create(draft)[1]["id"]
    study_update(study=changed, prolific_study_id="")
    study_update(study=Study.objects.get(pk=changed.pk), prolific_study_id=new_id_)
    take(old_id)
    published = victim_draft("published")
    ProlificStudyState.objects.filter(study=published).update(status="ACTIVE")
    attempts += 1
    try:
        study_update(study=published, prolific_study_id="")
        effects.append("a published study's ID was cleared")
    except ValidationError:
        refused += 1
    # d) two accounts ask for one workspace study's ID; a site administrator approves both
    #    requests at the same moment (two admin tabs): one owner, whatever the order
    contested = fake._study_create(draft)[1]["id"]
    rivals = [mine, Study.objects.create(slug="rival", title="R", kind="intruder", owner=owner)]
    for rival in rivals:
        study_update(study=Study.objects.get(pk=rival.pk), prolific_study_id=contested)
    claims = list(ProlificStudyClaim.objects.filter(prolific_study_id=contested))
    barrier, race = threading.Barrier(len(claims)), Counter()

    def approve(claim) -> None:
        barrier.wait()
        try:
            claim_approve(claim=claim, by=admin)
            race["approved"] += 1
        except ValidationError:
            race["refused"] += 1
        except Exception as error:
            race[f"error {type(error).__name__}"] += 1
        finally:
            connections.close_all()

    threads = [threading.Thread(target=approve, args=(c,)) for c in claims]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    attempts += len(claims)
    owners = ProlificStudyClaim.objects.filter(
        prolific_study_id=contested, approved_at__isnull=False
    ).count()
    holders = Study.objects.filter(prolific_study_id=contested).count()
    if owners != 1 or holders != 1 or any(k.startswith("error") for k in race):
        effects.append(f"race: {owners} owners, {holders} holders, {dict(race)}")
    refused += race["refused"]
    if remote(unlinked)[0] != "PAUSED":  # the pause above was Prolific's own, not the claimant's
        effects.append("the workspace study's status moved unexpectedly")
    return {
        "attempts": attempts,
        "refused": refused,
        "webhook_outcomes": dict(outcomes),
        "race": dict(race),
        "effects_found": effects,
        "effects": len(effects),
    }


def cross_study_attempts(*, study, fake, client, webhook_url: str, owner) -> dict:
    """A second researcher tries every Prolific action on `study` and its webhooks.

    Returns how many attempts were made, how many got further than a refusal, and how
    many things of `study` (on Prolific and here) changed.
    """
    import httpx
    from django.contrib.auth import get_user_model
    from django.core.exceptions import ValidationError
    from django.test import Client
    from django.urls import reverse

    from intruder.models import Assignment, Participant, Study
    from intruder.prolific.models import ProlificAction, ProlificStudyState
    from intruder.prolific.services import study_draft_create
    from intruder.services.studies import study_update

    target = study.prolific_study_id

    def snapshot() -> dict:
        state = ProlificStudyState.objects.get(study=study)
        return {
            "prolific_status": fake.studies[target]["status"],
            "prolific_submissions": sorted(
                (s["participant_id"], s["status"])
                for s in fake.submissions.values()
                if s["study_id"] == target
            ),
            "prolific_payments": sorted(p for p in fake.payments if p[0] == target),
            "rejections": sorted(
                k for k in fake.rejections if fake.submissions[k]["study_id"] == target
            ),
            "actions": sorted(
                ProlificAction.objects.filter(study=study).values_list("key", "status")
            ),
            "state": (state.status, sorted(state.counts.items())),
            "participants": sorted(
                Participant.objects.filter(study=study).values_list("prolific_pid", "status")
            ),
            "active": Assignment.objects.filter(
                participant__study=study, status=Assignment.Status.ACTIVE
            ).count(),
        }

    before = snapshot()
    attacker = get_user_model().objects.create_user(username="attacker", password="y" * 12)
    other = Study.objects.create(
        slug="attacker", title="Mine", kind=Study.Kind.INTRUDER, owner=attacker
    )
    attempts, refused = 0, 0
    # 1. Take the Prolific study ID (it is in every participant's link).
    attempts += 1
    try:
        study_update(study=other, prolific_study_id=target)
    except ValidationError:
        refused += 1
    other.refresh_from_db()  # the refused update had changed the object in memory
    # 2. Every Prolific action on the study's pages, as an account without a role on it.
    browser = Client()
    browser.force_login(attacker)
    pids = Participant.objects.filter(study=study).values_list("prolific_pid", flat=True)
    pid = pids.first() or "NOBODY"
    reason = "Rejected by someone with no role on the study, which must never reach it. " * 2
    posts = [
        ("researcher-prolific-transition", {"action": action}, {})
        for action in ("publish", "pause", "resume", "stop")
    ] + [
        ("researcher-prolific-sync", {}, {}),
        ("researcher-prolific-review", {"pid": [pid], "kind": "approve", "override": reason}, {}),
        ("researcher-prolific-review", {"pid": [pid], "kind": "reject", "reason": reason}, {}),
        ("researcher-prolific-bonus", {"per_identified": "5.00", "label": "stolen"}, {}),
        ("researcher-prolific-draft", {"places": 1, "reward_minor": 1, "estimated_minutes": 1}, {}),
        ("researcher-prolific-bulk", {"pid": [pid]}, {"rule": "approve-clean"}),
        ("researcher-prolific-bulk", {"pid": [pid]}, {"rule": "reject-excluded"}),
    ]
    for name, data, extra in posts:
        attempts += 1
        response = browser.post(reverse(name, kwargs={"slug": study.slug, **extra}), data)
        refused += response.status_code in (403, 404)
    # 3. Webhooks: the attacker's own Prolific study, taken by the same people, returned
    #    and paused; the study's participants and state must not move.
    study_draft_create(
        study=other,
        client=client,
        entry_url="http://127.0.0.1/s/attacker/",
        places=5,
        reward_minor=1,
        estimated_minutes=1,
    )
    other.refresh_from_db()
    fake.studies[other.prolific_study_id]["status"] = "ACTIVE"
    events = []
    for same_person in Participant.objects.filter(study=study).values_list(
        "prolific_pid", flat=True
    )[:10]:
        sub = fake.submission_start(other.prolific_study_id, same_person)
        events.append(fake.submission_set_status(sub, "RETURNED"))
    fake._study_transition({"action": "PAUSE"}, other.prolific_study_id)
    events.append(fake.events[-1])
    outcomes = Counter()
    with httpx.Client(timeout=30) as http:
        for event in events:
            attempts += 1
            delivery = fake.delivery(event)
            answer = http.post(webhook_url, content=delivery.body, headers=delivery.headers)
            outcomes[answer.json().get("outcome", str(answer.status_code))] += 1
    after = snapshot()
    changed = sorted(key for key in before if before[key] != after[key])
    return {
        "attempts": attempts,
        "refused": refused,
        "webhook_outcomes": dict(outcomes),
        "changed": changed,
        "effects": len(changed),
    }


def replay_while_fresh(deliveries: Deliveries, webhook_url: str, count: int, stop) -> dict:
    """Attack 3: send each newly recorded real delivery again at once, with a new X-Event-ID
    and a far-future X-Timestamp (the headers the signature does not cover), until `count`
    replays are sent or the traffic has stopped and every recording is seen."""
    import httpx
    from django.conf import settings

    from intruder.prolific.fake_server import new_id
    from intruder.prolific.signing import EVENT_ID_HEADER, EVENT_TIME_HEADER, TIMESTAMP_HEADER

    future = (datetime.now(UTC) + timedelta(days=3650)).isoformat()
    outcomes, stale, seen = Counter(), 0, 0
    with httpx.Client(timeout=30) as http:
        while sum(outcomes.values()) < count:
            with deliveries.cond:
                batch = deliveries.captured[seen:]
            seen += len(batch)
            if not batch:
                if stop.is_set() and deliveries.closed:
                    break
                time.sleep(0.1)
                continue
            # Ten seconds short of the window, so each replay sent reaches the deduplication.
            fresh_after = time.time() - settings.PROLIFIC_WEBHOOK_MAX_SKEW_SECONDS + 10
            for delivery in batch[: count - sum(outcomes.values())]:
                if float(delivery.headers[TIMESTAMP_HEADER]) <= fresh_after:
                    stale += 1
                    continue
                headers = {
                    **delivery.headers,
                    EVENT_ID_HEADER: new_id(),
                    EVENT_TIME_HEADER: future,
                }
                answer = http.post(webhook_url, content=delivery.body, headers=headers)
                outcome = answer.json().get("outcome") if answer.status_code < 300 else None
                outcomes[outcome or f"http_{answer.status_code}"] += 1
    return {
        "recorded": seen,
        "stale_skipped": stale,
        "sent": sum(outcomes.values()),
        "outcomes": dict(outcomes),
        "applied": outcomes["applied"],
    }


if __name__ == "__main__":
    main()

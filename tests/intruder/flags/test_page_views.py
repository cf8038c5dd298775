"""Server-side evidence: page views with tokens, reports that add up across reloads, and the
evasions an independent tester found (forged, replayed, reloaded, inserted). Clocks are
injected: nothing here depends on how fast the machine is."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from intruder.evidence.models import PageView
from intruder.evidence.page_views import MAX_VIEWS, page_view_report, page_view_serve
from intruder.evidence.selectors import Flag
from intruder.models import Assignment, Judgment, PersonGroup, Study
from intruder.services.assignment import assignment_next
from intruder.services.judgments import judgment_submit
from tests.intruder.factories import (
    make_description,
    make_participant,
    make_study,
    make_target,
    make_text,
)

pytestmark = pytest.mark.django_db

FIELDS = ("guessed_name", "revealing_text", "other_knowledge")
ANSWER = "A sailor who keeps lights."
T0 = timezone.now().replace(microsecond=0) - timedelta(hours=1)


def at(seconds: float):
    return T0 + timedelta(seconds=seconds)


def report(view: str, *, page_s: float, typed: int = 0, away_s: float = 0, **extra) -> str:
    """A browser's report of one view (what telemetry.js posts)."""
    counts = {name: {"typed": 0, "pasted": 0, "untrusted": 0} for name in FIELDS}
    counts["other_knowledge"]["typed"] = typed
    return json.dumps(
        {
            "v": 2,
            "view": view,
            "page_ms": int(page_s * 1000),
            "first_input_ms": None,
            "typing_ms": 0,
            "keystrokes": typed,
            "paste_events": 0,
            "pasted_chars": 0,
            "copy_events": 0,
            "copied_chars": 0,
            "focus_losses": 1 if away_s else 0,
            "away_ms": int(away_s * 1000),
            "fields": counts,
            **extra,
        }
    )


@pytest.fixture
def study():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2)
    for i in range(3):
        target = make_target(study=study, group=PersonGroup.FAMOUS, name=f"Oriel Vantassel{i}")
        make_text(study=study, description=make_description(study=study, target=target))
    return study


def served(study):
    """A participant whose first text was served (one page view) at T0."""
    participant = make_participant(study=study, consented_at=T0, instructions_seen_at=T0)
    assignment = assignment_next(participant=participant, now=T0)
    Assignment.objects.filter(pk=assignment.pk).update(shown_at=T0)
    assignment.refresh_from_db()
    view = page_view_serve(assignment=assignment, now=T0)
    return participant, assignment, view


def answer(participant, assignment, telemetry, *, now, other=ANSWER):
    return judgment_submit(
        participant=participant,
        assignment_id=assignment.pk,
        self_identified=False,
        other_knowledge=other,
        telemetry=telemetry,
        now=now,
    ).judgment


def codes(judgment) -> set[str]:
    return {flag["code"] for flag in judgment.flags}


def reason(judgment, code: str) -> str:
    return next(flag["reason"] for flag in judgment.flags if flag["code"] == code)


def test_a_reload_adds_to_the_texts_telemetry_and_never_resets_it(study):
    participant, assignment, first = served(study)
    # Typed 10 characters, then reloaded at 20 s: the beacon reports the first view.
    page_view_report(
        participant=participant, raw=report(first.token, page_s=20, typed=10), now=at(20)
    )
    second = page_view_serve(assignment=assignment, now=at(20.5))
    judgment = answer(
        participant, assignment, report(second.token, page_s=25, typed=20), now=at(45.5)
    )
    assert judgment.flags == []
    assert judgment.telemetry["page_views"] == 2
    assert judgment.telemetry["reported_views"] == 2
    assert judgment.telemetry["page_ms"] == 45_000
    assert judgment.telemetry["fields"]["other_knowledge"]["typed"] == 30
    assert judgment.time_spent_ms == 45_500  # from the first serving, on the server's clock


def test_leave_come_back_reload_then_answer_is_flagged_away(study):
    """The tester's evasion: 40 s away, back, reload (the new page counts from zero), answer.
    The first view's beacon reports the absence; the server adds it to the totals."""
    participant, assignment, first = served(study)
    page_view_report(
        participant=participant, raw=report(first.token, page_s=44, away_s=40), now=at(44)
    )
    second = page_view_serve(assignment=assignment, now=at(44.5))
    judgment = answer(
        participant, assignment, report(second.token, page_s=11, typed=40), now=at(55.5)
    )
    assert codes(judgment) == {Flag.AWAY}
    assert "40 s in 1 absence(s)" in reason(judgment, Flag.AWAY)
    assert judgment.time_spent_ms == 55_500  # not the 11 s of the last view


def test_a_reload_whose_view_sent_nothing_counts_as_time_away_and_does_not_fit(study):
    """A bot that reloads and answers from the new page, sending nothing for the first."""
    participant, assignment, _first = served(study)
    second = page_view_serve(assignment=assignment, now=at(45))
    judgment = answer(
        participant, assignment, report(second.token, page_s=10, typed=40), now=at(55)
    )
    assert codes(judgment) == {Flag.AWAY, Flag.INCONSISTENT}
    # 45 s less the 5 s allowed for loading the second view.
    assert "40 s no page view accounts for" in reason(judgment, Flag.AWAY)
    assert "page view 1 of 2 (served 0 s after the first) sent no telemetry" in reason(
        judgment, Flag.INCONSISTENT
    )


def test_a_full_record_that_disagrees_with_the_servers_clock_is_flagged(study):
    """Forged to look human (typed, timed) but sent 2 s after serving claiming 40 s."""
    participant, assignment, view = served(study)
    judgment = answer(participant, assignment, report(view.token, page_s=40, typed=40), now=at(2))
    assert Flag.INCONSISTENT in codes(judgment)
    assert "the browser counted 40.0 s on the page, the server 2.0 s" in reason(
        judgment, Flag.INCONSISTENT
    )
    assert Flag.TOO_FAST in codes(judgment)  # the server's clock, not the browser's


def test_a_full_record_consistent_with_the_server_is_the_documented_limit(study):
    """What cannot be detected: a forgery that mimics a person's counts and timing."""
    participant, assignment, view = served(study)
    judgment = answer(participant, assignment, report(view.token, page_s=40, typed=40), now=at(40))
    assert judgment.flags == []


def test_a_replayed_report_changes_nothing(study):
    participant, _, view = served(study)
    honest = report(view.token, page_s=30, typed=12, away_s=9)
    page_view_report(participant=participant, raw=honest, now=at(30))
    # A later, smaller report (an attempt to wipe the absence) is merged by maximum.
    page_view_report(participant=participant, raw=report(view.token, page_s=31), now=at(31))
    view.refresh_from_db()
    assert view.telemetry["away_ms"] == 9_000
    assert view.telemetry["fields"]["other_knowledge"]["typed"] == 12


def test_reports_for_another_participants_view_or_a_finished_text_are_ignored(study):
    participant, assignment, view = served(study)
    _, _, other_view = served(study)
    assert page_view_report(participant=participant, raw=report(other_view.token, page_s=5)) is None
    other_view.refresh_from_db()
    assert other_view.telemetry is None
    answer(participant, assignment, report(view.token, page_s=40, typed=40), now=at(40))
    late = report(view.token, page_s=90, away_s=50)
    assert page_view_report(participant=participant, raw=late, now=at(90)) is None


@pytest.mark.parametrize(
    "posted",
    ["", "garbage", "{" * 10_000, "\x00" * 40, json.dumps({"v": 2, "view": "x" * 64})],
)
def test_the_beacon_endpoint_answers_204_to_anything_and_keeps_only_its_own_views(
    study, client, posted
):
    participant, _, view = served(study)
    url = reverse("participant-telemetry", args=[participant.token])
    assert client.post(url, {"telemetry": posted}).status_code == 204
    view.refresh_from_db()
    assert view.telemetry is None
    assert client.post(url, {"telemetry": report(view.token, page_s=3)}).status_code == 204
    view.refresh_from_db()
    assert view.telemetry["page_ms"] == 3_000
    stranger = reverse("participant-telemetry", args=["not-a-token"])
    assert client.post(stranger, {"telemetry": report(view.token, page_s=9)}).status_code == 404


def test_the_beacon_needs_the_pages_csrf_token(study):
    from django.test import Client

    participant, _, view = served(study)
    strict = Client(enforce_csrf_checks=True)
    url = reverse("participant-telemetry", args=[participant.token])
    assert strict.post(url, {"telemetry": report(view.token, page_s=3)}).status_code == 403


def test_each_page_serving_is_a_view_with_its_own_token_in_the_page(study, client):
    participant, assignment, _ = served(study)
    home = reverse("participant-home", args=[participant.token])
    tokens = set()
    for _ in range(2):
        page = client.get(home).content.decode()
        tokens.add(page.split('data-view="')[1].split('"')[0])
    assert len(tokens) == 2
    assert set(PageView.objects.filter(assignment=assignment).values_list("token", flat=True)) >= (
        tokens
    )


def test_a_reload_loop_stops_adding_views(study):
    _, assignment, _ = served(study)
    for i in range(MAX_VIEWS + 5):
        page_view_serve(assignment=assignment, now=at(i))
    assert PageView.objects.filter(assignment=assignment).count() == MAX_VIEWS


def test_a_rejected_answer_counts_its_typing_for_the_prefilled_next_view(study, client):
    """Typed, sent without choosing yes or no (rejected), answered from the prefilled page."""
    participant, assignment, view = served(study)
    url = reverse("participant-judge", args=[participant.token])
    client.post(
        url,
        {
            "assignment_id": assignment.pk,
            "other_knowledge": ANSWER,
            "telemetry": report(view.token, page_s=1, typed=len(ANSWER)),
        },
    )
    assert not Judgment.objects.exists()
    view.refresh_from_db()
    assert view.telemetry["fields"]["other_knowledge"]["typed"] == len(ANSWER)
    client.get(reverse("participant-home", args=[participant.token]))  # the page again
    second = PageView.objects.filter(assignment=assignment).exclude(pk=view.pk).get()
    client.post(
        url,
        {
            "assignment_id": assignment.pk,
            "self_identified": "no",
            "other_knowledge": ANSWER,
            "telemetry": report(second.token, page_s=1, typed=0),
        },
    )
    judgment = Judgment.objects.get(assignment=assignment)
    assert Flag.FEW_KEYSTROKES not in codes(judgment)
    assert Flag.INSERTED not in codes(judgment)


def test_an_answer_queued_by_a_busy_server_is_not_a_clock_disagreement(study):
    """The browser counted 40 s; the server read its clock 12 s later (the answer waited in
    its queue): slower, not forged. Only more than the browser could have seen is."""
    participant, assignment, view = served(study)
    judgment = answer(participant, assignment, report(view.token, page_s=40, typed=40), now=at(52))
    assert Flag.INCONSISTENT not in codes(judgment)


def absent(view: str, *, page_s: float, spans: list[tuple[float, float]], typed: int = 0) -> str:
    """A report whose absences are placed on the page's clock (what telemetry.js sends)."""
    data = json.loads(report(view, page_s=page_s, typed=typed))
    data["absences"] = [[int(a * 1000), int(b * 1000)] for a, b in spans]
    data["away_ms"] = sum(int(b * 1000) - int(a * 1000) for a, b in spans)
    data["focus_losses"] = len(spans)
    return json.dumps(data)


@pytest.mark.parametrize("opened_at", [5, 30, 55])
@pytest.mark.parametrize("second_tab_s", [2, 3, 4])
def test_an_honest_second_tab_of_the_same_page_is_not_time_away(study, opened_at, second_tab_s):
    """The issue's 9 of 9: the participant opens their own page in a second tab for 2-4 s.
    The first tab's absence lies inside the second tab's view: no time away."""
    participant, assignment, first = served(study)
    back = opened_at + second_tab_s
    # Hiding the first tab sends its beacon (the absence still open).
    page_view_report(
        participant=participant,
        now=at(opened_at + 0.1),
        raw=absent(first.token, page_s=opened_at, spans=[(opened_at, opened_at)]),
    )
    second = page_view_serve(assignment=assignment, now=at(opened_at + 0.2))
    # Closing the second tab: its hiding and pagehide beacons.
    page_view_report(
        participant=participant,
        now=at(back),
        raw=absent(second.token, page_s=second_tab_s - 0.3, spans=[]),
    )
    judgment = answer(
        participant,
        assignment,
        now=at(70),
        telemetry=absent(first.token, page_s=70, typed=len(ANSWER), spans=[(opened_at, back)]),
    )
    assert judgment.flags == []


def test_a_second_tab_whose_last_report_was_lost_still_covers_what_it_reported(study):
    """The second tab reported once (hidden) and its closing beacon was lost: the seconds it
    reported cover the first tab's absence, the rest (under a second) counts as away."""
    participant, assignment, first = served(study)
    second = page_view_serve(assignment=assignment, now=at(20))
    page_view_report(
        participant=participant, raw=absent(second.token, page_s=3, spans=[]), now=at(23)
    )
    judgment = answer(
        participant,
        assignment,
        now=at(60),
        telemetry=absent(first.token, page_s=60, typed=len(ANSWER), spans=[(20, 24)]),
    )
    assert judgment.flags == []


def test_a_reload_with_placed_absences_is_not_away(study):
    participant, assignment, first = served(study)
    page_view_report(
        participant=participant,
        now=at(20),
        raw=absent(first.token, page_s=20, typed=10, spans=[(20, 20)]),
    )
    second = page_view_serve(assignment=assignment, now=at(20.6))
    judgment = answer(
        participant,
        assignment,
        now=at(45),
        telemetry=absent(second.token, page_s=24.4, typed=20, spans=[]),
    )
    assert judgment.flags == []


def test_leaving_then_reloading_with_placed_absences_is_still_away(study):
    """The bot that really leaves (40 s in another site), comes back, reloads, answers."""
    participant, assignment, first = served(study)
    page_view_report(
        participant=participant, now=at(44), raw=absent(first.token, page_s=44, spans=[(4, 44)])
    )
    second = page_view_serve(assignment=assignment, now=at(44.5))
    judgment = answer(
        participant,
        assignment,
        now=at(55.5),
        telemetry=absent(second.token, page_s=11, typed=40, spans=[]),
    )
    assert codes(judgment) == {Flag.AWAY}
    assert "40 s in 1 absence(s)" in reason(judgment, Flag.AWAY)


def test_a_second_tab_hidden_at_the_same_time_covers_nothing(study):
    """An adversary keeps a second tab of the page open, then leaves both for another site:
    the two tabs' absences overlap, so no view was shown and the time is away."""
    participant, assignment, first = served(study)
    second = page_view_serve(assignment=assignment, now=at(2))
    page_view_report(
        participant=participant, now=at(40), raw=absent(second.token, page_s=38, spans=[(3, 38)])
    )
    judgment = answer(
        participant,
        assignment,
        now=at(60),
        telemetry=absent(first.token, page_s=60, typed=len(ANSWER), spans=[(2, 5), (6, 40)]),
    )
    assert Flag.AWAY in codes(judgment)
    assert "34 s in 3 absence(s)" in reason(judgment, Flag.AWAY)


def test_a_replayed_report_cannot_erase_an_absence(study):
    participant, _, view = served(study)
    page_view_report(
        participant=participant, now=at(30), raw=absent(view.token, page_s=30, spans=[(5, 25)])
    )
    page_view_report(
        participant=participant, now=at(31), raw=absent(view.token, page_s=31, spans=[])
    )
    view.refresh_from_db()
    assert view.telemetry["absences"] == [[5_000, 25_000]]


def test_a_view_never_reported_beside_an_answer_from_another_is_a_trace(study):
    """First opened without JavaScript (or by a plain client), answered 3 s later from a
    second browser: the silent view is named however short it was."""
    participant, assignment, _first = served(study)
    second = page_view_serve(assignment=assignment, now=at(3))
    judgment = answer(
        participant,
        assignment,
        now=at(40),
        telemetry=absent(second.token, page_s=37, typed=len(ANSWER), spans=[]),
    )
    assert codes(judgment) == {Flag.INCONSISTENT}
    assert "page view 1 of 2 (served 0 s after the first) sent no telemetry" in reason(
        judgment, Flag.INCONSISTENT
    )

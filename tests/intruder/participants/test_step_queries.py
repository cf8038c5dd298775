"""The database round trips of each step of the intruder flow, pinned.

A Prolific launch sends hundreds of these requests a second, and each query costs the server
about as much CPU as the rest of the request (benchmarks/RESULTS.md, issue 25), so a change
that adds one to a step must show up here. The walk runs in autocommit, as a server does
(`transaction=True`), so BEGIN/COMMIT count where the step sends them; the counts are the
same on SQLite and PostgreSQL. `scripts/profile_intruder_steps.py` prints the same numbers
for a real study.
"""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from intruder.models import Judgment, Participant, PersonGroup, Study
from tests.intruder.factories import make_description, make_study, make_target, make_text

pytestmark = pytest.mark.django_db(transaction=True)

# Step -> queries. Item pages: participant, progress, the pool with its held slots, the claim
# (one INSERT) and the claimed text, then the server's record of this serving (issue 36: the
# open page views of the assignment, one INSERT); a reload needs participant and progress and
# that record. The answer also closes the page view it names (+1), and an answer given within
# `quick_answer_seconds` of its serving, as here, reads the participant's earlier judgments
# for the same quick answer (issue 48, +1; an answer after reading does not). The debrief shows the
# completion code, so its page marks the participant completed (one UPDATE) and "finish" only
# reads the participant back.
EXPECTED = {
    "entry": 12,
    "consent_page": 1,
    "consent_submit": 5,
    "instructions_page": 1,
    "instructions_submit": 2,
    "item_page": 7,
    "item_page_reload": 4,
    "item_submit": 9,
    "debrief_page": 3,
    "finish": 2,
}


@pytest.fixture
def study():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2)
    for i in range(4):
        target = make_target(study=study, group=PersonGroup.FAMOUS, name=f"Oriel Vantassel{i}")
        make_text(study=study, description=make_description(study=study, target=target))
    return study


def _form_action(page) -> str:
    return re.search(r'<form method="post" action="([^"]+)"', page.content.decode()).group(1)


def test_each_intruder_step_sends_a_pinned_number_of_queries(client, study):
    counts: dict[str, list[int]] = {}

    def step(name, request):
        with CaptureQueriesContext(connection) as queries:
            response = request()
        counts.setdefault(name, []).append(len(queries.captured_queries))
        return response

    entry = reverse("participant-entry", kwargs={"slug": study.slug})
    home = step("entry", lambda: client.get(f"{entry}?PROLIFIC_PID=STEPQUERIES01"))["Location"]
    page = step("consent_page", lambda: client.get(home))
    step("consent_submit", lambda: client.post(_form_action(page), {"decision": "agree"}))
    page = step("instructions_page", lambda: client.get(home))
    step("instructions_submit", lambda: client.post(_form_action(page)))
    for _ in range(study.items_per_participant):
        page = step("item_page", lambda: client.get(home))
        again = step("item_page_reload", lambda: client.get(home))
        assert again.content.count(b'name="assignment_id"') == 1
        assignment_id = re.search(rb'name="assignment_id" value="(\d+)"', page.content)[1]
        action = _form_action(page)
        answer = {"assignment_id": assignment_id.decode(), "self_identified": "no"}
        response = step(
            "item_submit",
            lambda action=action, answer=answer: client.post(
                action, {**answer, "other_knowledge": "Sails."}
            ),
        )
        assert response.status_code == 302
    page = step("debrief_page", lambda: client.get(home))
    finish = step("finish", lambda: client.post(_form_action(page)))

    assert "app.prolific.com" in finish["Location"]
    assert Participant.objects.get().status == Participant.Status.COMPLETED
    assert Judgment.objects.count() == study.items_per_participant
    assert {name: max(values) for name, values in counts.items()} == EXPECTED
    assert {name: min(values) for name, values in counts.items()} == EXPECTED

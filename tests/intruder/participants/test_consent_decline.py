"""Declining consent ends the study for good, so it takes a second, deliberate click: the
first only opens a note that says what happens, with the button that declines (issue 40)."""

from __future__ import annotations

import re

import pytest

from intruder.models import Participant
from tests.intruder.factories import make_study, make_texts
from tests.intruder.participants.test_intruder import enter

pytestmark = pytest.mark.django_db


def _consent_page(client):
    study = make_study()
    make_texts(study=study, count=2)
    url = f"/s/{study.slug}/?PROLIFIC_PID=DECLINE00001&STUDY_ID=S&SESSION_ID=X"
    home = client.get(url)["Location"]
    return home, client.get(home).content.decode()


def test_the_decline_button_sits_behind_a_note_that_says_what_happens(client):
    _home, html = _consent_page(client)
    form = html.split('<form method="post"', 1)[1].split("</form>", 1)[0]
    details = form.split('<details class="decline" id="decline">', 1)[1].split("</details>")[0]
    # The only control that declines is inside the closed disclosure, after its explanation.
    assert len(re.findall(r'value="decline"', form)) == 1 and 'value="decline"' in details
    assert "<summary" in details and "I do not agree</summary>" in details
    assert "the study ends for you" in details and "return it" in details
    assert details.index("the study ends for you") < details.index('value="decline"')
    assert "<details" in form and "<details open" not in form


def test_agreeing_stays_one_click_and_declining_still_works(client):
    home, _html = _consent_page(client)
    client.post(f"{home}consent/", {"decision": "decline"})
    assert Participant.objects.get().status == Participant.Status.RETURNED


def test_agreeing_is_one_click(client):
    study = make_study()
    make_texts(study=study, count=2)
    home = enter(client, study, "AGREE0000001")
    assert Participant.objects.get().consented_at is not None
    assert "Instructions" in client.get(home).content.decode()

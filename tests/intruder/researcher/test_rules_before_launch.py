"""The exclusion rules lock at the first participant, so the settings page, the "open"
switch and the study page lead to them first (issue 40)."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from intruder.evidence.flags import exclusion_rules_set
from intruder.models import Study
from tests.intruder.factories import STUDY_FORM, logged_in, make_participant, make_study

pytestmark = pytest.mark.django_db

RULES_LINK = "Record the exclusion rules</a>"
OPEN_WARNING = "The study is open with the default exclusion rules"


def _edit(study: Study, **changes):
    data = {**STUDY_FORM, **changes}
    data.pop("slug")
    return logged_in(study.owner).post(reverse("researcher-study-edit", args=[study.slug]), data)


def _page(study: Study, name: str) -> str:
    return logged_in(study.owner).get(reverse(name, args=[study.slug])).content.decode()


@pytest.mark.parametrize("name", ["researcher-study-edit", "researcher-study"])
def test_pages_lead_to_the_rules_while_they_can_still_be_recorded(name):
    study = make_study(is_open=False)
    html = _page(study, name)
    assert 'data-state="unrecorded"' in html and RULES_LINK in html
    assert reverse("researcher-flags", args=[study.slug]) + "#rules" in html
    if name == "researcher-study-edit":
        # The notice sits with the "open" switch, before it.
        assert html.index('id="rules-notice"') < html.index('id="id_is_open"')


def test_recorded_rules_are_named_with_their_time_instead():
    study = make_study(is_open=False)
    exclusion_rules_set(study=study, exclude=["too_fast"], thresholds={})
    html = _page(study, "researcher-study-edit")
    assert 'data-state="recorded"' in html and RULES_LINK not in html


def test_a_launched_study_without_rules_says_the_defaults_are_locked():
    study = make_study()
    make_participant(study=study)
    html = _page(study, "researcher-study")
    assert 'data-state="defaults-locked"' in html and RULES_LINK not in html


def test_opening_without_recorded_rules_warns_and_still_opens():
    study = make_study(is_open=False)
    response = _edit(study, is_open="on")
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.is_open
    assert any(OPEN_WARNING in str(m) for m in get_messages(response.wsgi_request))


@pytest.mark.parametrize("case", ["rules recorded", "already open", "stays closed"])
def test_no_warning_where_there_is_nothing_to_lead_to(case):
    study = make_study(is_open=case == "already open")
    if case == "rules recorded":
        exclusion_rules_set(study=study, exclude=["too_fast"], thresholds={})
    changes = {} if case != "stays closed" else {"is_open": ""}
    response = _edit(study, **changes)
    assert response.status_code == 302
    assert not any(OPEN_WARNING in str(m) for m in get_messages(response.wsgi_request))


def test_a_collection_study_is_led_to_its_rules_too():
    """Writers' answers are flagged as well (too fast, few keystrokes)."""
    study = make_study(kind=Study.Kind.COLLECTION, is_open=False)
    assert 'data-state="unrecorded"' in _page(study, "researcher-study")

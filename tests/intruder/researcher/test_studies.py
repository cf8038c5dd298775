"""Creating, editing and monitoring studies from the researcher pages."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from intruder.models import Participant, Study
from intruder.selectors.monitoring import study_progress
from tests.intruder.factories import (
    STUDY_FORM,
    make_description,
    make_judgment,
    make_member,
    make_participant,
    make_study,
    make_text,
    make_user,
)

pytestmark = pytest.mark.django_db


def test_researcher_creates_a_study_and_owns_it() -> None:
    user = make_user()
    client = Client()
    client.force_login(user)
    response = client.post(reverse("researcher-study-create"), STUDY_FORM)
    assert response.status_code == 302
    study = Study.objects.get(slug="winter-intruders")
    assert study.owner == user
    assert study.groups == ["famous", "semifamous"]
    assert (study.time_limit_minutes, study.completion_code) == (45, "C0DE42")


def test_invalid_settings_are_shown_and_nothing_is_created() -> None:
    client = Client()
    client.force_login(make_user())
    response = client.post(
        reverse("researcher-study-create"),
        {**STUDY_FORM, "judgments_per_text": 0, "identification_threshold": 1.5},
    )
    assert response.status_code == 200
    body = response.content.decode()
    # Each error sits next to its field, in plain words, never as a constraint's name.
    assert 'id="id_judgments_per_text_error"' in body
    assert 'id="id_identification_threshold_error"' in body
    assert "Constraint" not in body and "study_threshold_unit_interval" not in body
    assert not Study.objects.exists()


def test_editor_changes_settings_but_not_the_owner() -> None:
    study = make_study(slug="s1")
    editor = make_member(study=study, role="editor")
    client = Client()
    client.force_login(editor)
    data = {**STUDY_FORM, "title": "Renamed", "groups": ["fictitious"]}
    data.pop("slug")
    response = client.post(reverse("researcher-study-edit", kwargs={"slug": "s1"}), data)
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.title, study.groups, study.owner == editor) == (
        "Renamed",
        ["fictitious"],
        False,
    )


def test_progress_counts_descriptions_judgments_per_text_and_participants() -> None:
    study = make_study(judgments_per_text=3)
    texts = [make_text(study=study) for _ in range(3)]
    make_text(study=study, status="draft")
    pids = [make_participant(study=study) for _ in range(3)]
    # text 0 judged by 3, text 1 by 1, text 2 by none; the draft is not served.
    for slot, participant in enumerate(pids, start=1):
        make_judgment(participant=participant, text=texts[0], slot=slot)
    make_judgment(participant=pids[0], text=texts[1], position=2)
    Participant.objects.filter(pk=pids[1].pk).update(status="completed")
    Participant.objects.filter(pk=pids[2].pk).update(status="returned")
    progress = study_progress(study)
    assert progress["descriptions"] == 4
    assert progress["judgments_per_text"] == {
        "texts": 3,
        "min": 0,
        "median": 1,
        "target": 3,
        "total": 4,
        "complete_pct": round(100 * 4 / 9, 1),
    }
    assert progress["participants"] == {
        "started": 1,
        "at_debrief": 0,
        "completed": 1,
        "returned": 1,
        "timed_out": 0,
    }
    assert progress["anonymized"] == {"draft": 1, "released": 3, "withdrawn": 0}


def test_progress_respects_the_groups_the_study_shows() -> None:
    study = make_study(groups=["famous"])
    make_text(study=study)  # a fictitious target's text
    assert study_progress(study)["judgments_per_text"]["texts"] == 0


def test_study_list_and_json_show_live_figures() -> None:
    study = make_study(title="Spring collection", kind="collection")
    make_description(study=study)
    make_description(study=study)
    client = Client()
    client.force_login(study.owner)
    body = client.get(reverse("researcher-studies")).content.decode()
    assert "Spring collection" in body
    assert 'data-field="descriptions">2<' in body
    data = client.get(reverse("researcher-progress")).json()
    assert data["studies"][0]["descriptions"] == 2
    make_description(study=study)
    data = client.get(reverse("researcher-progress")).json()
    assert data["studies"][0]["descriptions"] == 3


def test_detail_page_shows_the_prolific_entry_link() -> None:
    study = make_study(slug="entry-test")
    client = Client()
    client.force_login(study.owner)
    body = client.get(reverse("researcher-study", kwargs={"slug": "entry-test"})).content.decode()
    assert "/s/entry-test/?PROLIFIC_PID={{%PROLIFIC_PID%}}" in body


def test_a_model_refusal_is_shown_next_to_its_field_in_plain_words() -> None:
    from django.core.exceptions import ValidationError

    from intruder.views.researcher.forms import StudyForm

    form = StudyForm(data={**STUDY_FORM, "slug": "fresh"})
    assert form.is_valid(), form.errors
    form.add_service_error(ValidationError({"time_limit_minutes": ["Too long for Prolific."]}))
    assert form.errors["time_limit_minutes"] == ["Too long for Prolific."]
    assert "__all__" not in form.errors


def test_a_collection_study_ignores_ticked_source_studies() -> None:
    source = make_study(kind="collection")
    client = Client()
    client.force_login(source.owner)
    data = {
        **STUDY_FORM,
        "slug": "other-writers",
        "kind": "collection",
        "source_studies": [source.pk],
    }
    response = client.post(reverse("researcher-study-create"), data)
    assert response.status_code == 302
    assert not Study.objects.get(slug="other-writers").source_studies.exists()

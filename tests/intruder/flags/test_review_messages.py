"""Confirming or overruling a flag says what happened, naming the answer by Prolific ID as
the rest of the researcher pages do (issue 40)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.models import Description, Judgment
from tests.intruder.factories import (
    logged_in,
    make_description,
    make_judgment,
    make_member,
    make_participant,
    make_study,
    make_text,
)

pytestmark = pytest.mark.django_db


def _flagged_judgment():
    study = make_study()
    participant = make_participant(study=study, prolific_pid="5f0c0ffee0c0ffee0c0ffee1")
    judgment = make_judgment(participant=participant, text=make_text(study=study))
    Judgment.objects.filter(pk=judgment.pk).update(
        flags=[{"code": "paste", "reason": "pasted 40 characters"}]
    )
    return study, judgment


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        (
            "confirm",
            "Flag confirmed: the judgment of participant 5f0c0ffee0c0ffee0c0ffee1 is excluded",
        ),
        (
            "overrule",
            "Flag overruled: the judgment of participant 5f0c0ffee0c0ffee0c0ffee1 is kept",
        ),
    ],
)
def test_a_review_says_what_it_did(decision, expected):
    study, judgment = _flagged_judgment()
    url = reverse("researcher-flag-review", args=[study.slug, "judgment", judgment.pk])
    page = logged_in(study.owner).post(url, {"decision": decision, "reason": "seen"}, follow=True)
    assert expected in page.content.decode()


def test_a_refused_review_says_so_and_no_success_is_shown():
    study, judgment = _flagged_judgment()
    url = reverse("researcher-flag-review", args=[study.slug, "judgment", judgment.pk])
    page = logged_in(study.owner).post(url, {"decision": "confirm", "reason": ""}, follow=True)
    html = page.content.decode()
    assert "Please choose confirm or overrule and say why." in html
    assert "Flag confirmed" not in html


def test_a_viewer_gets_no_message_and_changes_nothing():
    study, judgment = _flagged_judgment()
    url = reverse("researcher-flag-review", args=[study.slug, "judgment", judgment.pk])
    viewer = make_member(study=study)
    assert logged_in(viewer).post(url, {"decision": "confirm", "reason": "x"}).status_code == 403
    judgment.refresh_from_db()
    assert not judgment.flag_review


def test_a_description_review_names_the_writer():
    study = make_study()
    writer = make_participant(study=study, prolific_pid="5f0c0ffee0c0ffee0c0ffee2")
    description = make_description(study=study, writer=writer, external_id="d-7")
    Description.objects.filter(pk=description.pk).update(
        flags=[{"code": "too_fast", "reason": "typed fast"}]
    )
    url = reverse("researcher-flag-review", args=[study.slug, "description", description.pk])
    page = logged_in(study.owner).post(url, {"decision": "overrule", "reason": "ok"}, follow=True)
    assert "Flag overruled: description d-7 by writer 5f0c0ffee0c0ffee0c0ffee2 is kept" in (
        page.content.decode()
    )


def test_the_flags_page_names_participants_by_prolific_id_not_by_judgment_id():
    study, judgment = _flagged_judgment()
    html = logged_in(study.owner).get(reverse("researcher-flags", args=[study.slug])).content
    html = html.decode()
    assert "Participant 5f0c0ffee0c0ffee0c0ffee1 · judgment of" in html
    assert f"Judgment {judgment.pk} ·" not in html
    assert reverse("researcher-review-text", args=[study.slug, judgment.text_id]) in html

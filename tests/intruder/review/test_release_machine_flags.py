"""The bulk release page counts the drafts the machine re-identifies (the latest risk
check), and the unreviewed ones among them, beside the unreviewed drafts (issue 40)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from intruder.models import AnonymizedText
from intruder.risk.models import AttackResult, AttackRun
from tests.intruder.factories import logged_in, make_description, make_study, make_text

pytestmark = pytest.mark.django_db


def _drafts(study, n):
    return [
        make_text(study=study, description=make_description(study=study), status="draft")
        for _ in range(n)
    ]


def _risk_check(study, ranks):
    run = AttackRun.objects.create(
        study=study, purpose=AttackRun.Purpose.RISK_CHECK, attacks=["tfidf", "dense"]
    )
    for text, (attack, rank) in ranks:
        AttackResult.objects.create(
            run=run,
            description=text.description,
            anonymized_text=text,
            method=text.method,
            attack=attack,
            predicted_key="x",
            true_rank=rank,
        )
    return run


def _confirm_page(study) -> str:
    url = reverse("researcher-release", args=[study.slug])
    return logged_in(study.owner).post(url, {"scope": "all"}).content.decode()


def test_the_confirmation_counts_machine_flagged_drafts_and_the_unreviewed_among_them():
    study = make_study()
    a, b, c, _unflagged = _drafts(study, 4)
    AnonymizedText.objects.filter(pk=a.pk).update(reviewed_at=timezone.now())
    # a and b ranked first (one attack is enough, dense alone too); c ranked 3rd: no flag.
    _risk_check(study, [(a, ("tfidf", 1)), (b, ("dense", 1)), (c, ("tfidf", 3))])
    html = _confirm_page(study)
    assert "<strong>2</strong> of them the machine re-identifies" in html
    assert "1 of them not marked reviewed" in html
    assert "<strong>3</strong> of them have not been marked reviewed" in html


def test_without_a_risk_check_or_flags_the_line_is_absent():
    study = make_study()
    _drafts(study, 2)
    assert 'id="machine-flagged"' not in _confirm_page(study)
    _risk_check(study, [])
    assert 'id="machine-flagged"' not in _confirm_page(study)


def test_another_studys_risk_check_does_not_count():
    study, other = make_study(), make_study()
    _drafts(study, 1)
    [foreign] = _drafts(other, 1)
    _risk_check(other, [(foreign, ("tfidf", 1))])
    assert 'id="machine-flagged"' not in _confirm_page(study)

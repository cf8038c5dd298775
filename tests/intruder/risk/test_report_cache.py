"""The report cache's data version: every change a report reads gives a new one, and
nothing else does (a stale report is never shown, a busy study is not recomputed needlessly)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from intruder.models import Judgment, Participant
from intruder.reports.cache import cached_for_inputs, cached_for_study
from intruder.reports.versions import study_data_version
from tests.intruder.factories import (
    make_job,
    make_judgment,
    make_participant,
    make_study,
    make_texts,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged():
    study = make_study()
    text = make_texts(study=study, count=1)[0]
    participant = make_participant(study=study)
    return study, participant, make_judgment(participant=participant, text=text)


def test_an_update_in_place_changes_the_version(judged):
    study, _, judgment = judged
    before = study_data_version(study)
    # A rescoring or a flag review writes with update(): no timestamp, no signal.
    Judgment.objects.filter(pk=judgment.pk).update(identified=True)
    after_rescoring = study_data_version(study)
    Judgment.objects.filter(pk=judgment.pk).update(flag_review=Judgment.Review.CONFIRMED)
    assert len({before, after_rescoring, study_data_version(study)}) == 3


def test_new_rows_and_settings_change_the_version(judged):
    study, _, _ = judged
    versions = [study_data_version(study)]
    make_participant(study=study)
    versions.append(study_data_version(study))
    study.identification_threshold = 0.95
    study.save()
    versions.append(study_data_version(study))
    make_job(study=study, kind="construct_loss")
    versions.append(study_data_version(study))
    assert len(set(versions)) == 4


def test_a_participant_loading_a_page_or_a_pdf_job_leaves_the_version(judged):
    study, participant, _ = judged
    before = study_data_version(study)
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=timezone.now())
    make_job(study=study, kind="risk_report_pdf", heartbeat_at=timezone.now())
    assert study_data_version(study) == before
    assert study_data_version(make_study()) != before


def test_a_cached_report_is_computed_once_per_version(judged):
    study, _, judgment = judged
    calls = []

    def compute():
        calls.append(1)
        return {"n": len(calls)}

    assert cached_for_study(study, "report", (1,), compute) == {"n": 1}
    assert cached_for_study(study, "report", (1,), compute) == {"n": 1}
    assert cached_for_study(study, "report", (2,), compute) == {"n": 2}  # other arguments
    Judgment.objects.filter(pk=judgment.pk).update(identified=False)
    assert cached_for_study(study, "report", (1,), compute) == {"n": 3}
    assert cached_for_inputs("plot", [1, 2], compute) == {"n": 4}
    assert cached_for_inputs("plot", [1, 2], compute) == {"n": 4}
    assert cached_for_inputs("plot", [1, 3], compute) == {"n": 5}


def test_the_rows_domains_register_change_the_version(judged):
    """Risk's runs and results and answer evidence's attention checks reach the version
    through the report store's registry (the store imports neither package)."""
    from intruder.evidence.models import AttentionCheck
    from intruder.risk.models import AttackResult, AttackRun

    study, participant, judgment = judged
    versions = [study_data_version(study)]
    check = AttentionCheck.objects.create(
        participant=participant, after_texts=1, prompt="Type blue.", expected="blue"
    )
    versions.append(study_data_version(study))
    AttentionCheck.objects.filter(pk=check.pk).update(answer="red", passed=False)
    versions.append(study_data_version(study))
    run = AttackRun.objects.create(study=study, attacks=["tfidf"], methods=["clear"])
    versions.append(study_data_version(study))
    AttackResult.objects.create(
        run=run,
        description=judgment.text.description,
        anonymized_text=judgment.text,
        method="clear",
        attack="tfidf",
        predicted_key="x",
        true_rank=1,
    )
    versions.append(study_data_version(study))
    assert len(set(versions)) == 5

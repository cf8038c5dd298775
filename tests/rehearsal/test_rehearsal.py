"""The dress rehearsal: the demo study played end to end with no violation (the project's
end-to-end test), every seeded fault named, and bad options refused before anything starts."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from intruder.demo import load_demo
from intruder.evidence.catch_trials import catch_trial_add
from intruder.models import AnonymizedText, Judgment, Participant, Study
from intruder.rehearsal.runner import FAULTS
from intruder.services import anonymization
from tests.intruder.fake_anonymizer import FakeAnonymizer

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

# Arrivals over 2 study minutes; Prolific times out who stopped answering
# after 5 study minutes (the rehearsal's clock skips the waiting either way).
FAST = {"arrival_minutes": 2.0, "timeout_minutes": 5.0}
CATCH_TEXTS = (
    "PERSON_1 restores clock towers in small coastal towns and keeps bees on the roof of an "
    "old post office. Friends say PERSON_1 bakes bread at dawn and walks the cliffs at dusk.",
    "PERSON_1 collects old radios, mends them in a shed and gives them to the village school. "
    "In winter PERSON_1 carves wooden birds and sells them at the market by the church.",
)


@pytest.fixture
def demo_study(prepared_reports) -> Study:
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    try:
        load_demo(password="pw-rehearsal", attacks=False)
    finally:
        anonymization.set_anonymizer(previous)
    study = Study.objects.get(slug="demo-intruder")
    # The fake anonymizer leaves words the leak checks hold back; the rehearsal needs the
    # demo's 30 texts released, as the real model's are but two.
    AnonymizedText.objects.filter(description__study=study).update(status="released")
    # Two catch trials: each intruder is shown both, and the default crowd then holds the
    # random-name responder that only they catch (issue 48).
    for text in CATCH_TEXTS:
        catch_trial_add(study=study, text=text)
    return study


def rehearse(study: Study, out, **options) -> dict:
    try:
        call_command("rehearse", study.slug, out=out, **{**FAST, **options})
    finally:
        result = json.loads((out / "rehearsal.json").read_text())
    return result


def test_the_demo_study_rehearses_end_to_end_with_no_violation(demo_study, tmp_path):
    participants = Participant.objects.count()
    judgments = Judgment.objects.count()
    result = rehearse(demo_study, tmp_path / "r", participants=20, seed=1)
    assert result["violations_total"] == 0, [
        (v["name"], v["involved"]) for v in result["violations"] if v["count"]
    ]
    assert {v["name"] for v in result["violations"]} >= {
        "double_payments",
        "payments_to_ineligible",
        "bots_kept",
        "honest_excluded",
        "slots_orphaned_or_overfilled",
        "judgments_lost",
        "uneven_judgment_counts",
        "submissions_not_listed",
        "report_forms_differ",
    }
    # The random-name responder played (the study has catch trials) and was excluded: no
    # violation names it in "bots_kept".
    assert result["kinds"]["random_famous"] >= 1
    outcomes = result["outcomes"]
    assert outcomes["completed"] >= 10 and outcomes["answers"] >= 50
    assert outcomes["returned"] >= 1 and outcomes["timed_out"] >= 1
    assert result["researcher"]["report_numbers"]["summary.json"]  # the report was built
    assert result["plan"]["groups"][-1]["group"] == "all"
    assert all(step["n"] for step in result["latency"].values())
    cpu = result["cpu"]  # the crowd's and the site's apart
    assert cpu["crowd_seconds"] > 0 and cpu["site_seconds"] > 0 and cpu["participant_requests"]
    summary = (tmp_path / "r" / "summary.md").read_text()
    assert "no violation" in summary and "Simulated crowd" in summary
    # Nothing of the rehearsal reached the configured database.
    assert Participant.objects.count() == participants
    assert Judgment.objects.count() == judgments
    demo_study.refresh_from_db()
    assert not demo_study.prolific_study_id


def test_every_seeded_fault_is_named_and_fails_the_rehearsal(demo_study, tmp_path):
    with pytest.raises(CommandError) as failed:
        rehearse(demo_study, tmp_path / "r", participants=12, seed=2, fault=list(FAULTS))
    result = json.loads((tmp_path / "r" / "rehearsal.json").read_text())
    counts = {v["name"]: v["count"] for v in result["violations"]}
    expected = {
        "payments_to_ineligible",  # bonus_to_excluded
        "judgments_lost",  # drop_judgment
        "submissions_not_listed",  # hide_submission
        "report_forms_differ",  # change_report_number
    }
    assert all(counts[name] >= 1 for name in expected), counts
    for name in expected:
        assert name in str(failed.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"participants": 51}, "at most 50 participants"),  # 3 texts each: 2 are catch trials
        ({"participants": 0}, "at least 1 participant"),
        ({"participants": 5, "mix": "honest_desktop=0.5,careless=0.4"}, "sum to 0.9, not 1"),
        ({"participants": 5, "mix": "sleepwalker=1"}, "unknown kind 'sleepwalker'"),
    ],
)
def test_bad_options_get_one_line_before_anything_starts(demo_study, tmp_path, options, message):
    with pytest.raises(CommandError, match=message):
        call_command("rehearse", demo_study.slug, out=tmp_path / "r", **options)
    assert not (tmp_path / "r").exists()


def test_a_study_without_released_texts_or_a_collection_is_refused(demo_study, tmp_path):
    collection = Study.objects.get(slug="demo-collection")
    with pytest.raises(CommandError, match="description collection"):
        call_command("rehearse", collection.slug, out=tmp_path / "a", participants=1)
    AnonymizedText.objects.filter(description__study=demo_study).update(status="draft")
    with pytest.raises(CommandError, match="no released texts"):
        call_command("rehearse", demo_study.slug, out=tmp_path / "b", participants=1)


def test_the_study_page_queues_a_rehearsal_job_that_shows_its_verdict(
    demo_study, settings, tmp_path
):
    from django.urls import reverse

    from intruder.models import Job
    from intruder.services import jobs
    from tests.intruder.factories import logged_in, make_member, make_user

    settings.VAR_DIR = tmp_path
    url = reverse("researcher-study-rehearse", args=[demo_study.slug])
    viewer = make_member(study=demo_study, user=make_user(), role="viewer")
    assert logged_in(viewer).post(url, {"participants": 6}).status_code in (403, 404)
    assert logged_in(make_user()).post(url, {"participants": 6}).status_code == 404
    owner = logged_in(demo_study.owner)
    refused = owner.post(url, {"participants": 999}, follow=True)
    assert b"at most 50 participants" in refused.content
    assert not Job.objects.filter(kind=Job.Kind.REHEARSE_STUDY).exists()
    owner.post(url, {"participants": 6, "seed": 4})
    job = Job.objects.get(kind=Job.Kind.REHEARSE_STUDY)
    job = jobs.job_execute(job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["participants"] == 6 and "violations_total" in job.result
    assert job.progress_done == job.progress_total == 6
    page = owner.get(reverse("researcher-study", args=[demo_study.slug])).content.decode()
    assert 'id="rehearsal-verdict"' in page and "Simulated: no person took part" in page

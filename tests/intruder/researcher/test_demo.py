"""The demo: written data, idempotent loading, anonymized and released intruder texts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from intruder.auth import DEMO_PASSWORD
from intruder.demo import DEMO_DIR, load_demo
from intruder.enrolment import EnrolmentRefused
from intruder.models import AnonymizedText, Description, Job, Study, TargetPerson
from intruder.selectors.leak_checks import leak_warnings
from intruder.services import anonymization
from intruder.services.participants import participant_enroll
from tests.intruder.fake_anonymizer import FakeAnonymizer

MODEL_DIR = Path(__file__).resolve().parents[3] / "anonymize" / "models"


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DEMO_DIR / name).read_text().splitlines()]


@pytest.fixture
def fake_anonymizer():
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    yield
    anonymization.set_anonymizer(previous)


def test_demo_data_has_enough_persons_and_long_descriptions() -> None:
    targets = rows("targets.jsonl")
    descriptions = rows("descriptions.jsonl")
    groups = Counter(t["group"] for t in targets)
    assert groups["fictitious"] >= 10 and groups["famous"] >= 1 and groups["semifamous"] >= 1
    for target in targets:
        if target["group"] == "fictitious":
            assert set(target["profile"]) >= {
                "full_name",
                "relationship_status",
                "job",
                "age",
                "country",
            }
        if target["group"] == "semifamous":
            assert target["wikipedia_url"].startswith("https://")
    per_person = Counter(d["target"] for d in descriptions)
    assert set(per_person) == {t["key"] for t in targets}
    assert all(2 <= n <= 4 for n in per_person.values())
    assert min(len(d["text"]) for d in descriptions) >= 500


@pytest.mark.django_db
def test_load_demo_builds_both_studies_and_releases_texts(fake_anonymizer, prepared_reports):
    report = load_demo(password="pw-demo-test", attacks=False)
    assert authenticate(username="researcher", password="pw-demo-test") is not None
    collection = Study.objects.get(slug="demo-collection")
    intruder = Study.objects.get(slug="demo-intruder")
    assert collection.kind == "collection" and intruder.kind == "intruder"
    assert collection.targets.count() == intruder.targets.count() == 14
    assert not collection.descriptions.exists()
    assert intruder.descriptions.count() == 30
    texts = AnonymizedText.objects.filter(description__study=intruder)
    assert texts.count() == 30
    assert report.anonymization_job.status == "succeeded"
    assert report.released + len(report.held_back) == 30
    assert texts.filter(status="released").count() == report.released > 0
    # The report pages are stored for the data as loaded: their first view computes nothing.
    from intruder.analysis.page import ANALYSIS_PAGE
    from intruder.annotation.pages import AGREEMENT_PAGE, project_data_version
    from intruder.reports.models import ComputedReport
    from intruder.reports.versions import study_data_version

    analysis = ComputedReport.objects.get(study=intruder, name=ANALYSIS_PAGE)
    assert analysis.data_version == study_data_version(intruder)
    agreement = ComputedReport.objects.get(project=report.annotation, name=AGREEMENT_PAGE)
    assert agreement.data_version == project_data_version(report.annotation)


@pytest.mark.django_db
def test_load_demo_twice_changes_nothing(fake_anonymizer, capsys) -> None:
    call_command("load_demo", "--password", "pw-demo-test", "--no-attacks")
    first = capsys.readouterr().out
    counts = (TargetPerson.objects.count(), Description.objects.count())
    call_command("load_demo", "--password", "pw-demo-test", "--no-attacks")
    assert (TargetPerson.objects.count(), Description.objects.count()) == counts
    assert AnonymizedText.objects.count() == 30
    assert Job.objects.count() == 1
    assert "password: pw-demo-test" in first
    assert "/s/demo-intruder/?PROLIFIC_PID=" in first
    assert "/s/demo-collection/?PROLIFIC_PID=" in first


@pytest.mark.django_db
def test_load_demo_reports_a_failed_anonymization_and_resumes(capsys) -> None:
    previous = anonymization.set_anonymizer(FakeAnonymizer(crash_after=10))
    try:
        with pytest.raises(Exception, match="simulated crash"):
            call_command("load_demo", "--no-attacks")
        saved = AnonymizedText.objects.count()
        assert 0 < saved < 30
        anonymization.set_anonymizer(FakeAnonymizer())
        call_command("load_demo", "--no-attacks")
        assert AnonymizedText.objects.count() == 30
        job = Job.objects.get()  # the failed job was retried, not replaced
        assert (job.status, job.attempts) == ("succeeded", 2)
        assert job.result["skipped"] == saved
    finally:
        anonymization.set_anonymizer(previous)


@pytest.mark.slow
@pytest.mark.django_db
def test_demo_with_the_shipped_model_masks_names(settings) -> None:
    chosen = settings.INTRUDER_ANONYMIZER_MODEL  # or a model of one's own, by env
    if not chosen and not (MODEL_DIR.is_dir() and any(MODEL_DIR.glob("*/config.json"))):
        pytest.skip(f"no shipped model under {MODEL_DIR}")
    previous = anonymization.set_anonymizer(None)
    try:
        report = load_demo(password="pw-demo-test", attacks=False)
    finally:
        anonymization.set_anonymizer(previous)
    assert report.anonymization_job.status == "succeeded", report.anonymization_job.error
    texts = AnonymizedText.objects.filter(description__study__slug="demo-intruder")
    assert texts.count() == 30
    assert all(t.spans for t in texts)
    leaking = [t.pk for t in texts if "target name" in " ".join(leak_warnings(t))]
    assert len(leaking) <= 3, leaking


@pytest.mark.django_db
def test_the_demo_studies_both_admit_participants_only_in_demo_mode(
    fake_anonymizer, settings
) -> None:
    # The two demo studies share their invented persons, i.e. they are linked: only the demo
    # (INTRUDER_DEMO=1, set by scripts/demo.sh) keeps both open to new participants.
    load_demo(password="pw-demo-test", attacks=False)
    intruder = Study.objects.get(slug="demo-intruder")
    settings.INTRUDER_DEMO = True
    assert participant_enroll(study=intruder, prolific_pid="DEMOINTRUDER01").created
    settings.INTRUDER_DEMO = False
    with pytest.raises(EnrolmentRefused):
        participant_enroll(study=intruder, prolific_pid="DEMOINTRUDER02")
    # A PID that played the writer is refused as an intruder, in the demo too.
    settings.INTRUDER_DEMO = True
    collection = Study.objects.get(slug="demo-collection")
    participant_enroll(study=collection, prolific_pid="DEMOWRITER01")
    with pytest.raises(EnrolmentRefused):
        participant_enroll(study=intruder, prolific_pid="DEMOWRITER01")


@pytest.mark.django_db
def test_the_well_known_demo_password_logs_in_only_in_demo_mode(fake_anonymizer, settings):
    load_demo(attacks=False)
    settings.INTRUDER_DEMO = False
    assert authenticate(username="researcher", password=DEMO_PASSWORD) is None
    settings.INTRUDER_DEMO = True
    assert authenticate(username="researcher", password=DEMO_PASSWORD) is not None


@pytest.mark.slow  # three attack runs with the real sentence encoder
@pytest.mark.django_db
def test_demo_leaves_judgments_a_finished_risk_check_and_a_report(fake_anonymizer) -> None:
    from intruder.models import Judgment
    from intruder.risk.demo import run_demo_attacks
    from intruder.risk.models import AttackRun
    from intruder.risk.selectors import run_report
    from tests.intruder.risk_fixtures import FAST_CONFIG

    report = load_demo(password="pw-demo-test", attacks=False)
    intruder = report.intruder
    assert (
        report.judgments_created
        == Judgment.objects.filter(text__description__study=intruder).count()
        > 0
    )
    assert intruder.judgments_per_text - 3 >= 1  # room left for a person trying the demo
    check, run = run_demo_attacks(
        intruder, intruder.owner, attacks=("tfidf", "bm25"), config=FAST_CONFIG
    )
    assert check.purpose == AttackRun.Purpose.RISK_CHECK and check.job.status == "succeeded"
    assert run.job.status == "succeeded"
    assert run.knowledge_budget is None  # the report run, the newest: the page's default
    budget = AttackRun.objects.get(knowledge_budget=1)
    assert budget.job.status == "succeeded" and budget.created_at < run.created_at
    risk = run_report(run)
    assert "per_text" in risk.tables and risk.paragraphs
    # The demo ships with its knowledge-budget ladder: b = 1 beside every description.
    ladder = risk.tables["knowledge_budget"]
    assert set(ladder["knowledge_budget"]) == {"1", "all"}
    assert "Nearest the human rate" in risk.notes["knowledge_budget"]
    # Loading again adds nothing: same judgments, same three runs.
    again = load_demo(password="pw-demo-test", attacks=False)
    assert again.judgments_created == 0
    run_demo_attacks(intruder, intruder.owner, attacks=("tfidf", "bm25"), config=FAST_CONFIG)
    assert AttackRun.objects.count() == 3


@pytest.mark.django_db
def test_demo_judges_are_simulated_with_plausible_timings_and_labelled(fake_anonymizer) -> None:
    from django.urls import reverse

    from intruder.analysis.selectors import study_report
    from intruder.models import Judgment, Participant
    from tests.intruder.factories import logged_in

    report = load_demo(password="pw-demo-test", attacks=False)
    assert report.judgments_created > 0
    intruder = Study.objects.get(slug="demo-intruder")
    judges = Participant.objects.filter(study=intruder, judgments__isnull=False).distinct()
    assert judges.count() == 3 and all(p.simulated for p in judges)
    seconds = [j.time_spent_ms / 1000 for j in Judgment.objects.filter(participant__in=judges)]
    assert min(seconds) > 5 and 30 < sorted(seconds)[len(seconds) // 2] < 200
    for judgment in Judgment.objects.filter(participant__in=judges).select_related("assignment"):
        shown, done = judgment.assignment.shown_at, judgment.assignment.completed_at
        assert (done - shown).total_seconds() == pytest.approx(judgment.time_spent_ms / 1000, abs=1)
    assert study_report(intruder).warnings[0].startswith("Simulated human data: 3 of the 3")
    page = logged_in(intruder.owner).get(reverse("analysis-study", args=[intruder.slug]))
    assert b"Simulated human data" in page.content


@pytest.mark.django_db
def test_restarting_the_demo_keeps_the_researcher_logged_in():
    """The demo sets its password on every start; the same password must not end the
    researcher's sessions (a new hash would), a changed one must (issue 40)."""
    from django.test import Client

    from intruder.demo import _researcher

    user = _researcher("intruder-demo")
    client = Client()
    assert user.check_password("intruder-demo")
    client.force_login(user)  # the session holds a hash of the stored password hash
    assert client.get("/r/").status_code == 200
    _researcher("intruder-demo")  # a restart
    assert client.get("/r/").status_code == 200
    _researcher("another-demo-password")  # DEMO_RESEARCHER_PASSWORD changed: sessions end
    assert client.get("/r/").status_code == 302


@pytest.mark.django_db
def test_the_demo_simulates_familiarity_answers_and_labels_them(fake_anonymizer) -> None:
    from intruder.models import FamiliarityAnswer, Participant

    load_demo(password="pw-demo-test", attacks=False)
    intruder = Study.objects.get(slug="demo-intruder")
    assert intruder.ask_familiarity
    answers = FamiliarityAnswer.objects.filter(participant__study=intruder)
    judges = Participant.objects.filter(study=intruder, simulated=True).count()
    famous = intruder.targets.filter(group="famous").count()
    assert answers.count() == judges * famous > 0
    assert all(a.simulated for a in answers)
    assert not answers.exclude(target__group="famous").exists()
    # A judge who named a person had heard of them.
    for answer in answers.filter(heard_of=False):
        assert not answer.participant.judgments.filter(
            identified=True, text__description__target=answer.target
        ).exists()
    load_demo(password="pw-demo-test", attacks=False)
    assert FamiliarityAnswer.objects.filter(participant__study=intruder).count() == answers.count()

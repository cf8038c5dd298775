"""The demo: written data, idempotent loading, anonymized and released intruder texts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from intruder.demo import DEMO_DIR, load_demo
from intruder.models import AnonymizedText, Description, Job, Study, TargetPerson
from intruder.services import anonymization
from tests.intruder.fake_anonymizer import FakeAnonymizer

MODEL_DIR = Path(__file__).resolve().parents[2] / "anonymize" / "models"


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
def test_load_demo_builds_both_studies_and_releases_texts(fake_anonymizer) -> None:
    report = load_demo(password="pw-demo-test")
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


@pytest.mark.django_db
def test_load_demo_twice_changes_nothing(fake_anonymizer, capsys) -> None:
    call_command("load_demo", "--password", "pw-demo-test")
    first = capsys.readouterr().out
    counts = (TargetPerson.objects.count(), Description.objects.count())
    call_command("load_demo", "--password", "pw-demo-test")
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
            call_command("load_demo")
        saved = AnonymizedText.objects.count()
        assert 0 < saved < 30
        anonymization.set_anonymizer(FakeAnonymizer())
        call_command("load_demo")
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
        report = load_demo(password="pw-demo-test")
    finally:
        anonymization.set_anonymizer(previous)
    assert report.anonymization_job.status == "succeeded", report.anonymization_job.error
    texts = AnonymizedText.objects.filter(description__study__slug="demo-intruder")
    assert texts.count() == 30
    assert all(t.spans for t in texts)
    leaking = [t.pk for t in texts if "target name" in " ".join(anonymization.leak_warnings(t))]
    assert len(leaking) <= 3, leaking

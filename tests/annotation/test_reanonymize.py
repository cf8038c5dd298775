"""A study is re-anonymized with a retrained model, beside its earlier texts."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

import anonymize
from intruder.models import AnonymizedText
from intruder.services.anonymization import MODEL_METHOD
from tests.intruder.factories import make_description, make_study, make_text
from tests.intruder.fake_anonymizer import FakeAnonymizer

pytestmark = pytest.mark.django_db


def test_reanonymize_study_with_a_model_folder_adds_drafts_of_its_own_method(monkeypatch, tmp_path):
    study = make_study()
    for i in range(3):
        description = make_description(study=study, text=f"Text {i}: she met Corvin in Brackwater.")
        make_text(study=study, description=description, method=MODEL_METHOD)
    model_dir = tmp_path / "retrained"
    model_dir.mkdir()
    (model_dir / "config.json").write_text("{}")
    loaded = []
    monkeypatch.setattr(
        anonymize.Anonymizer,
        "load",
        classmethod(lambda cls, path, **kw: loaded.append(path) or FakeAnonymizer()),
    )
    call_command("reanonymize_study", study.slug, "--model-dir", str(model_dir))
    new = AnonymizedText.objects.filter(description__study=study, method="model-retrained")
    assert new.count() == 3 and {t.status for t in new} == {"draft"}
    assert "PERSON_FIRSTNAME_1" in new.first().text
    assert loaded == [str(model_dir.resolve())]
    # Rerunning resumes (nothing to do), never duplicates.
    call_command("reanonymize_study", study.slug, "--model-dir", str(model_dir))
    assert new.count() == 3
    assert AnonymizedText.objects.filter(method=MODEL_METHOD).count() == 3


def test_reanonymize_refuses_a_folder_without_a_model(tmp_path):
    study = make_study()
    with pytest.raises(CommandError, match="no model at"):
        call_command("reanonymize_study", study.slug, "--model-dir", str(tmp_path))

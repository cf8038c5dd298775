"""One shape for a study run: attack runs and guard runs share one abstract base, and each
setting's range has one home (`intruder.bounds`) that the forms, the API and the services read."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from intruder.bounds import FOLDS, SEED
from intruder.models import Job
from intruder.risk import attack_runs
from intruder.risk.apis import AttackRunCreateApi
from intruder.risk.forms import AttackRunForm, GuardForm
from intruder.risk.guarding import GuardRunError, guard_run_start
from intruder.risk.models import AttackRun, GuardRun, StudyRun
from tests.intruder.risk_fixtures import risk_study, study_with_guardable_texts

pytestmark = pytest.mark.django_db

SHARED = {
    "attacks",
    "background",
    "background_documents",
    "folds",
    "seed",
    "summary",
    "created_by",
    "created_at",
}


def test_attack_runs_and_guard_runs_extend_one_abstract_study_run():
    assert StudyRun._meta.abstract
    assert issubclass(AttackRun, StudyRun) and issubclass(GuardRun, StudyRun)
    declared = {f.name for f in StudyRun._meta.get_fields()}
    assert declared == SHARED
    for model in (AttackRun, GuardRun):
        fields = {f.name: f for f in model._meta.get_fields()}
        assert fields["folds"].default == FOLDS.default and fields["seed"].default == SEED.default
        # Both keep their tables' ordering and reverse names.
        assert model._meta.ordering == ["-created_at", "-id"]
        assert fields["study"].related_model._meta.model_name == "study"
        assert fields["job"].related_model is Job
    assert AttackRun.Background is GuardRun.Background is StudyRun.Background


@pytest.mark.parametrize("folds", [FOLDS.low - 1, FOLDS.high + 1])
def test_the_forms_the_api_and_the_services_refuse_folds_with_one_message(folds):
    study = risk_study(per_person=1)
    attack_form = AttackRunForm(
        {"attacks": ["tfidf"], "methods": ["clear"], "folds": folds, "seed": 0}, study=study
    )
    guard_form = GuardForm({"rank": 2, "budget": 0.3, "folds": folds}, candidates=4)
    serializer = AttackRunCreateApi.InputSerializer(
        data={"study": study.pk, "methods": ["clear"], "folds": folds}
    )
    assert not attack_form.is_valid() and not guard_form.is_valid()
    assert not serializer.is_valid()
    assert attack_form.errors["folds"] == [FOLDS.message]
    assert guard_form.errors["folds"] == [FOLDS.message]
    assert [str(e) for e in serializer.errors["folds"]] == [FOLDS.message]
    with pytest.raises(attack_runs.AttackRunError) as attack_error:
        attack_runs.attack_run_start(
            study=study, user=study.owner, attacks=["tfidf"], methods=["clear"], folds=folds
        )
    guarded = study_with_guardable_texts()
    with pytest.raises(GuardRunError) as guard_error:
        guard_run_start(study=guarded, user=guarded.owner, rank=2, folds=folds)
    assert str(attack_error.value) == str(guard_error.value) == FOLDS.message
    assert not AttackRun.objects.exists() and not GuardRun.objects.exists()


def test_both_forms_read_an_uploaded_background_the_same_way():
    study = risk_study(per_person=1)
    broken = {"documents": [SimpleUploadedFile("people.jsonl", b'{"target": "x"}\n')]}
    attack_form = AttackRunForm(
        {"attacks": ["tfidf"], "methods": ["clear"], "background": "uploaded", "seed": 0},
        broken,
        study=study,
    )
    broken = {"documents": [SimpleUploadedFile("people.jsonl", b'{"target": "x"}\n')]}
    guard_form = GuardForm(
        {"rank": 2, "budget": 0.3, "background": "uploaded"}, broken, candidates=4
    )
    assert not attack_form.is_valid() and not guard_form.is_valid()
    assert attack_form.errors["documents"] == guard_form.errors["documents"]
    assert "people.jsonl, line 1" in attack_form.errors["documents"][0]

"""One range mechanism (issue 50): every bound of a study, an attack run and a guard run is a
`Bound` of `intruder.bounds`, and the form, the API and the start service refuse a value
outside it with the same message, whichever of them is asked (an API post or a script that
bypasses the form meets the same words)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from intruder import bounds
from intruder.bounds import GUARD_BUDGET, KNOWLEDGE_BUDGET, RANK, RESAMPLES, Bound
from intruder.models import Job, Study
from intruder.risk import attack_runs
from intruder.risk.forms import AttackRunForm, GuardForm
from intruder.risk.guarding import GuardRunError, guard_run_start
from intruder.risk.models import AttackRun, GuardRun
from intruder.services.studies import study_create
from intruder.views.researcher.forms import StudyForm
from tests.intruder.factories import STUDY_FORM, make_user
from tests.intruder.risk_fixtures import risk_study, study_with_guardable_texts

pytestmark = pytest.mark.django_db

STUDY_BOUNDS = {
    "items_per_participant": bounds.ITEMS_PER_PARTICIPANT,
    "judgments_per_text": bounds.JUDGMENTS_PER_TEXT,
    "min_description_chars": bounds.MIN_DESCRIPTION_CHARS,
    "time_limit_minutes": bounds.TIME_LIMIT_MINUTES,
    "identification_threshold": bounds.IDENTIFICATION_THRESHOLD,
    "attention_checks": bounds.ATTENTION_CHECKS,
}


def outside(bound: Bound) -> list[float]:
    """Return a value just below and just above the range (a share steps by 0.01)."""
    step = 1 if isinstance(bound.low, int) else 0.01
    return [bound.low - step, bound.high + step]


STUDY_CASES = [(name, value) for name, bound in STUDY_BOUNDS.items() for value in outside(bound)]


def test_every_numeric_study_setting_reads_its_bound():
    for name, bound in STUDY_BOUNDS.items():
        field = Study._meta.get_field(name)
        assert {v.limit_value for v in field.validators} >= {bound.low, bound.high}
        assert field.default == bound.default
    for name, bound in {"rank": RANK, "budget": GUARD_BUDGET}.items():
        assert {v.limit_value for v in GuardRun._meta.get_field(name).validators} == {
            bound.low,
            bound.high,
        }


@pytest.mark.parametrize(("name", "value"), STUDY_CASES)
def test_a_study_setting_out_of_range_is_refused_in_one_wording_by_form_api_and_service(
    name, value
):
    message = STUDY_BOUNDS[name].message
    form = StudyForm(data={**STUDY_FORM, name: value})
    assert not form.is_valid() and form.errors[name] == [message]
    api = APIClient()
    api.force_authenticate(owner := make_user())
    body = {"slug": "bounded", "title": "Bounded", "kind": "intruder", name: value}
    response = api.post("/api/studies/create/", body, format="json")
    assert response.status_code == 400 and response.json()[name] == [message]
    with pytest.raises(ValidationError) as refused:
        study_create(owner=owner, slug="bounded", title="Bounded", kind="intruder", **{name: value})
    assert refused.value.message_dict[name] == [message]
    assert not Study.objects.filter(slug="bounded").exists()


RUN_FORM = {"attacks": ["tfidf"], "methods": ["clear"], "folds": 2, "seed": 0}


@pytest.mark.parametrize(
    ("field", "value", "bound"),
    [
        # Resamples took 1-50 in the form and the API but 10-50 in the service before.
        ("budget_resamples", 1, RESAMPLES),
        ("budget_resamples", RESAMPLES.low - 1, RESAMPLES),
        ("budget_resamples", RESAMPLES.high + 1, RESAMPLES),
        ("knowledge_budget", 0, KNOWLEDGE_BUDGET),
        ("knowledge_budget", KNOWLEDGE_BUDGET.high + 1, KNOWLEDGE_BUDGET),
    ],
)
def test_an_attack_runs_budget_out_of_range_is_refused_alike_by_form_api_and_service(
    field, value, bound
):
    study = risk_study(per_person=1)
    settings = {"knowledge_budget": 2, field: value}
    form = AttackRunForm({**RUN_FORM, **settings}, study=study)
    assert not form.is_valid() and form.errors[field] == [bound.message]
    api = APIClient()
    api.force_authenticate(study.owner)
    payload = {"study": study.pk, "attacks": ["tfidf"], "methods": ["clear"], "folds": 2}
    response = api.post("/api/attack-runs/create/", payload | settings, format="json")
    assert response.status_code == 400 and response.json()[field] == [bound.message]
    with pytest.raises(attack_runs.AttackRunError) as refused:
        attack_runs.attack_run_start(
            study=study,
            user=study.owner,
            attacks=["tfidf"],
            methods=["clear"],
            folds=2,
            budget_resamples=settings.get("budget_resamples"),
            knowledge_budget=settings["knowledge_budget"],
        )
    assert str(refused.value) == bound.message
    assert not AttackRun.objects.exists()


GUARD_CASES = [("rank", v, RANK) for v in outside(RANK)] + [
    ("budget", v, GUARD_BUDGET) for v in outside(GUARD_BUDGET)
]


@pytest.mark.parametrize(("field", "value", "bound"), GUARD_CASES)
def test_a_guard_setting_out_of_range_is_refused_alike_by_form_page_and_service(
    field, value, bound
):
    """The guard has no start API: a script calls the start service, the page the form."""
    study = study_with_guardable_texts()
    settings = {"rank": 2, "budget": 0.3, field: value}
    form = GuardForm(settings, candidates=1000)
    assert not form.is_valid() and form.errors[field] == [bound.message]
    client = Client()
    client.force_login(study.owner)
    url = reverse("researcher-study-guard", args=[study.slug])
    page = client.post(url, {k: str(v) for k, v in settings.items()}, follow=True)
    assert bound.message in page.content.decode()
    with pytest.raises(GuardRunError) as refused:
        guard_run_start(study=study, user=study.owner, **settings)
    assert str(refused.value) == bound.message
    assert not GuardRun.objects.exists() and not Job.objects.filter(kind="guard_study").exists()


@pytest.mark.parametrize("value", ["many", None, float("nan")])
def test_a_service_refuses_what_is_no_number_as_out_of_range(value):
    """A script may pass anything: a bound says no, never a TypeError (a 500 in a view)."""
    assert not RANK.holds(value) and not GUARD_BUDGET.holds(value)
    assert RANK.holds(2) and RANK.holds("1000") and GUARD_BUDGET.holds(1.0)

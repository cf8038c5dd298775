"""The seam between collection and intruder test: writers' descriptions reach intruders
without a file round-trip, with provenance kept, and a collection study points there."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from intruder.models import Description, Job, Study
from intruder.services import anonymization
from intruder.services.jobs import job_execute
from intruder.services.sources import descriptions_take_from_sources, study_sources_set
from tests.intruder.factories import make_description, make_participant, make_study, make_target
from tests.intruder.fake_anonymizer import FakeAnonymizer

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake_model():
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    yield
    anonymization.set_anonymizer(previous)


@pytest.fixture
def collection() -> Study:
    study = make_study(slug="writers", kind=Study.Kind.COLLECTION)
    target = make_target(study=study, key="fictitious_1", name="Wren Halloway", aliases=["Wren"])
    writer = make_participant(study=study, prolific_pid="WRITERPID1")
    make_description(
        study=study, target=target, writer=writer, text="Wren Halloway keeps bees, Ada says."
    )
    return study


def test_created_from_a_collection_it_takes_descriptions_then_anonymizes(collection, fake_model):
    client = Client()
    client.force_login(collection.owner)
    form = client.get(reverse("researcher-study-create"), {"source": "writers"})
    assert form.context["form"].initial["kind"] == "intruder"
    response = client.post(
        reverse("researcher-study-create"),
        {
            "slug": "intruders",
            "title": "Intruders (internal)",
            "public_title": "A reading study",
            "kind": "intruder",
            "items_per_participant": 3,
            "judgments_per_text": 2,
            "min_description_chars": 500,
            "time_limit_minutes": 30,
            "identification_threshold": 0.75,
            "identified_rule": "mean_cosine",
            "identification_rule": "best_match",
            "completion_code": "C0DE",
            "source_studies": [collection.pk],
        },
    )
    assert response.status_code == 302, response.context["form"].errors
    study = Study.objects.get(slug="intruders")
    assert list(study.source_studies.all()) == [collection]
    page = client.get(reverse("researcher-study", args=["intruders"])).content.decode()
    assert "1</strong> new description" in page
    page = client.post(reverse("researcher-study-anonymize", args=["intruders"]), follow=True)
    queued = Job.objects.get(study=study)
    # The page opens at the top: the new job's progress bar is there, before the settings.
    body = page.content.decode()
    status_url = reverse("researcher-job-status", args=[queued.pk])
    assert body.index('id="active-jobs"') < body.index("<h2>Progress</h2>")
    assert body.index(status_url) < body.index("<h2>Progress</h2>")
    job = job_execute(queued.pk, heartbeat_interval_s=None)
    assert job.status == "succeeded", job.error
    assert job.result["taken_from_sources"] == 1
    copy = study.descriptions.get()
    assert copy.source.study == collection
    assert copy.provenance == {
        "source_study": "writers",
        "source_description_id": copy.source_id,
        "writer_pid": "WRITERPID1",
    }
    assert copy.target.name == "Wren Halloway" and copy.target.aliases == ["Wren"]
    assert (
        copy.anonymizations.get().text
        == "Wren PERSON_FIRSTNAME_1 keeps bees, PERSON_FIRSTNAME_2 says."
    )


def test_taking_twice_takes_only_what_is_new(collection):
    study = make_study()
    study_sources_set(study=study, sources=[collection])
    assert descriptions_take_from_sources(study=study).descriptions_created == 1
    assert descriptions_take_from_sources(study=study).descriptions_created == 0
    writer = make_participant(study=collection)
    make_description(study=collection, target=collection.targets.get(), writer=writer)
    report = descriptions_take_from_sources(study=study)
    assert (report.descriptions_created, report.targets_created) == (1, 0)
    assert study.targets.count() == 1


def test_two_collections_with_the_same_key_for_different_people(collection):
    other = make_study(slug="writers-b", kind=Study.Kind.COLLECTION)
    make_description(
        study=other, target=make_target(study=other, key="fictitious_1", name="Ivo Marr")
    )
    study = make_study()
    study_sources_set(study=study, sources=[collection, other])
    descriptions_take_from_sources(study=study)
    assert set(study.targets.values_list("key", "name")) == {
        ("fictitious_1", "Wren Halloway"),
        ("writers-b-fictitious_1", "Ivo Marr"),
    }


def test_only_intruder_tests_take_and_only_from_collections(collection):
    with pytest.raises(ValidationError):
        study_sources_set(study=make_study(kind=Study.Kind.COLLECTION), sources=[collection])
    with pytest.raises(ValidationError):
        study_sources_set(study=make_study(), sources=[make_study()])


def test_collection_page_points_to_an_intruder_test_and_offers_no_release(collection):
    client = Client()
    client.force_login(collection.owner)
    body = client.get(reverse("researcher-study", args=["writers"])).content.decode()
    assert "New intruder test from this collection" in body
    assert "Anonymize descriptions with the model" not in body


def test_public_title_is_what_participants_see(collection):
    collection.public_title = "Describing people"
    collection.save()
    body = Client().get(
        "/s/writers/?PROLIFIC_PID=ABCDEF123456&STUDY_ID=x&SESSION_ID=y", follow=True
    )
    html = body.content.decode()
    assert "Describing people" in html and collection.title not in html


def test_deleting_the_source_keeps_the_provenance(collection):
    study = make_study()
    study_sources_set(study=study, sources=[collection])
    descriptions_take_from_sources(study=study)
    Description.objects.filter(study=collection).delete()
    copy = study.descriptions.get()
    assert copy.source is None and copy.provenance["writer_pid"] == "WRITERPID1"


def test_the_api_sets_sources_and_takes_descriptions(collection):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(collection.owner)
    created = client.post(
        "/api/studies/create/",
        {
            "slug": "api-intruders",
            "title": "API",
            "kind": "intruder",
            "source_studies": [collection.pk],
        },
        format="json",
    )
    assert created.status_code == 201, created.data
    assert created.data["source_studies"] == [collection.pk]
    taken = client.post(f"/api/studies/{created.data['id']}/take/")
    assert taken.data == {"descriptions_created": 1, "targets_created": 1, "targets_reused": 0}
    stranger = make_study(kind=Study.Kind.COLLECTION)  # someone else's: not among "yours"
    refused = client.patch(
        f"/api/studies/{created.data['id']}/update/",
        {"source_studies": [stranger.pk]},
        format="json",
    )
    assert refused.status_code == 400 and "source_studies" in refused.data


def test_the_api_refuses_viewers_taking_descriptions(collection):
    from rest_framework.test import APIClient

    from tests.intruder.factories import make_member

    study = make_study()
    study_sources_set(study=study, sources=[collection])
    client = APIClient()
    client.force_authenticate(make_member(study=study))
    assert client.post(f"/api/studies/{study.pk}/take/").status_code == 403
    assert not study.descriptions.exists()

"""The guard job's live table and its background options (uploaded documents or k-fold)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from intruder.models import Job
from intruder.risk.guarding import GUARD_BATCH, guard_study_texts
from tests.intruder.factories import logged_in, make_job, make_member, make_user
from tests.intruder.risk_fixtures import HOBBIES, study_with_guardable_texts

pytestmark = pytest.mark.django_db

# Uploaded background about the same made-up persons, one document each.
UPLOADED = {
    key: f"{key.title()} paints rivers and teaches drawing, and loves {hobby} at home."
    for key, hobby in HOBBIES.items()
}


def test_rows_are_published_batch_by_batch_while_the_job_runs():
    study = study_with_guardable_texts()
    published = []
    result = guard_study_texts(
        study=study,
        progress=lambda *a, **kw: None,
        k=2,
        folds=2,
        publish=lambda summary: published.append(len(summary["texts"])),
    )
    assert published == sorted(published) and published[-1] == len(result["texts"]) == 12
    assert len(published) >= 12 // GUARD_BATCH  # at least one publication per batch


def test_uploaded_background_guards_every_text_against_the_documents():
    study = study_with_guardable_texts()
    result = guard_study_texts(
        study=study,
        progress=lambda *a, **kw: None,
        k=2,
        background="uploaded",
        background_documents=UPLOADED,
    )
    assert result["background"] == "uploaded" and result["guarded"] == 12
    zora = [row for row in result["texts"] if row["target"] == "zora"]
    assert all("origami" in row["masked_words"] for row in zora)
    assert all(rank >= 2 for row in zora for rank in row["rank_after"].values())


def test_uploaded_background_for_one_person_is_refused():
    study = study_with_guardable_texts()
    with pytest.raises(ValueError, match="at least two persons"):
        guard_study_texts(
            study=study,
            progress=lambda *a, **kw: None,
            background="uploaded",
            background_documents={"zora": UPLOADED["zora"]},
        )


def test_review_form_queues_an_uploaded_background_with_the_documents():
    study = study_with_guardable_texts()
    files = [
        SimpleUploadedFile(f"{key}.txt", text.encode(), content_type="text/plain")
        for key, text in UPLOADED.items()
    ]
    url = reverse("researcher-study-guard", args=[study.slug])
    data = {"k": "2", "budget": "0.3", "background": "uploaded", "folds": "5", "documents": files}
    assert logged_in(study.owner).post(url, data).status_code == 302
    job = Job.objects.get(kind="guard_study")
    assert job.params["background"] == "uploaded"
    assert job.params["background_documents"] == UPLOADED


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ([], "at least two of the study"),
        ([("people.jsonl", b'{"target": "zora"}\n')], "people.jsonl, line 1"),
    ],
)
def test_review_form_refuses_a_bad_upload_without_queuing(files, message):
    study = study_with_guardable_texts()
    uploads = [SimpleUploadedFile(name, content) for name, content in files]
    url = reverse("researcher-study-guard", args=[study.slug])
    data = {"k": "2", "budget": "0.3", "background": "uploaded", "documents": uploads}
    page = logged_in(study.owner).post(url, data, follow=True)
    assert page.status_code == 200 and message in page.content.decode()
    assert not Job.objects.filter(kind="guard_study").exists()


def test_rows_endpoint_serves_the_rows_of_a_running_job():
    study = study_with_guardable_texts()
    partial = guard_study_texts(study=study, progress=lambda *a, **kw: None, k=2, folds=2)
    partial["texts"] = partial["texts"][:3]
    make_job(
        study=study,
        kind="guard_study",
        status=Job.Status.RUNNING,
        result=partial,
        progress_done=3,
        progress_total=12,
    )
    viewer = make_member(study=study)
    answer = logged_in(viewer).get(reverse("researcher-study-guard-rows", args=[study.slug]))
    data = answer.json()
    assert data["status"] == "running" and not data["finished"]
    assert (data["progress_done"], data["progress_total"]) == (3, 12)
    assert set(data["rows"]) == {str(row["text_id"]) for row in partial["texts"]}
    row = data["rows"][str(partial["texts"][0]["text_id"])]
    assert {"ranks", "masked_words", "flagged", "reason"} <= set(row)
    page = logged_in(study.owner).get(reverse("researcher-review", args=[study.slug]))
    html = page.content.decode()
    assert "Machine rank before → after" in html and "waiting" in html
    assert "guard_rows.js" in html


def test_rows_endpoint_is_for_the_study_members_only():
    study = study_with_guardable_texts()
    url = reverse("researcher-study-guard-rows", args=[study.slug])
    assert logged_in(make_user()).get(url).status_code == 404
    assert Client().get(url).status_code == 302  # to the login page

"""One click undoes a guard run, and the review list says why a text was not guarded."""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.models import AnonymizedText, Job
from intruder.risk.guarding import GuardRunError, guard_run_undo
from intruder.services.review import anonymized_text_set_spans
from tests.intruder.factories import logged_in, make_member, make_user
from tests.intruder.risk_fixtures import guarded_run, study_with_guardable_texts

pytestmark = pytest.mark.django_db


def spans_of(study) -> dict[int, list]:
    """Return each text's (start, end, category) spans, the masking a researcher sees."""
    return {
        t.pk: [(s["start"], s["end"], s["category"]) for s in t.spans]
        for t in AnonymizedText.objects.filter(description__study=study)
    }


def test_undo_restores_every_text_the_run_changed_and_keeps_later_edits():
    study = study_with_guardable_texts()
    before = spans_of(study)
    run = guarded_run(study, status=Job.Status.SUCCEEDED)
    changed = list(run.results.filter(changed=True).select_related("anonymized_text"))
    assert len(changed) >= 2
    # A researcher edits one guarded text afterwards: undo must not overwrite that edit.
    edited = changed[0].anonymized_text
    start = edited.description.text.index("rivers")
    mine = sorted(
        [*edited.spans, {"start": start, "end": start + 6, "category": "LOCATION"}],
        key=lambda span: span["start"],
    )
    anonymized_text_set_spans(
        text=edited, spans=mine, expected_revision=edited.revision, user=study.owner
    )
    counts = guard_run_undo(run=run, user=study.owner)
    assert counts == {"restored": len(changed) - 1, "released": 0, "edited": 1}
    after = spans_of(study)
    for row in changed[1:]:
        assert after[row.anonymized_text_id] == before[row.anonymized_text_id]
    assert len(after[edited.pk]) == len(mine)
    run.refresh_from_db()
    assert run.undone_at is not None and run.summary["undone"] == counts
    with pytest.raises(GuardRunError, match="already undone"):
        guard_run_undo(run=run, user=study.owner)


def test_only_the_latest_finished_run_can_be_undone():
    study = study_with_guardable_texts()
    older = guarded_run(study, status=Job.Status.SUCCEEDED)
    guarded_run(study, status=Job.Status.SUCCEEDED)
    with pytest.raises(GuardRunError, match="latest"):
        guard_run_undo(run=older, user=study.owner)


def test_the_review_page_undoes_in_one_click_for_editors_only():
    study = study_with_guardable_texts()
    before = spans_of(study)
    run = guarded_run(study, status=Job.Status.SUCCEEDED)
    url = reverse("researcher-guard-undo", args=[study.slug])
    page = logged_in(study.owner).get(reverse("researcher-review", args=[study.slug]))
    assert b'id="guard-undo"' in page.content
    viewer = make_user()
    make_member(study=study, user=viewer, role="viewer")
    assert logged_in(viewer).post(url, {"run": run.pk}).status_code in (403, 404)
    assert logged_in(make_user()).post(url, {"run": run.pk}).status_code == 404
    forged = logged_in(study.owner).post(url, {"run": run.pk + 99}, follow=True)
    assert b"not the study" in forged.content
    assert spans_of(study) != before
    done = logged_in(study.owner).post(url, {"run": run.pk}, follow=True)
    assert b"Guard run undone" in done.content and b'id="guard-undone"' in done.content
    assert spans_of(study) == before


def test_a_text_the_run_did_not_guard_says_why():
    study = study_with_guardable_texts()
    released = AnonymizedText.objects.filter(description__study=study).first()
    AnonymizedText.objects.filter(pk=released.pk).update(status=AnonymizedText.Status.RELEASED)
    run = guarded_run(study, status=Job.Status.SUCCEEDED)
    assert run.summary["skipped_texts"] == {str(released.pk): "released"}
    page = logged_in(study.owner).get(reverse("researcher-review", args=[study.slug]))
    assert b"not guarded: released" in page.content

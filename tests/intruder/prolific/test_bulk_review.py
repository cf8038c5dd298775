"""Bulk approve/reject following the study's exclusion rules, against the fake Prolific:
preview, approve the clean, reject the excluded with a reason, retry safety, the pages."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from intruder.evidence.flags import exclusion_rules_set
from intruder.models import Judgment, Participant, PersonGroup, Study, StudyMember
from intruder.prolific.bulk_review import (
    APPROVE_CLEAN,
    REJECT_EXCLUDED,
    bulk_candidates,
    bulk_review,
)
from intruder.prolific.models import ProlificAction
from intruder.prolific.services import (
    ProlificActionRefused,
    study_draft_create,
    study_sync,
    study_transition,
)
from tests.intruder.factories import (
    logged_in,
    make_judgment,
    make_participant,
    make_study,
    make_texts,
    make_user,
)

pytestmark = pytest.mark.django_db

TOO_FAST = {"code": "too_fast", "reason": "Answered 1.2 s after the text was shown."}
NO_TELEMETRY = {"code": "no_telemetry", "reason": "The browser sent no valid telemetry."}
PASTE = {"code": "paste", "reason": "1 paste(s), 40 characters pasted."}


@pytest.fixture
def published(prolific_settings, client_for):
    """A published intruder study whose exclusion rules exclude every flag but no_telemetry."""
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=9)
    make_texts(study=study, count=2, group=PersonGroup.FAMOUS)
    exclusion_rules_set(
        study=study,
        exclude=["paste", "canary", "too_fast", "away", "few_keystrokes", "attention_failed"],
        thresholds={},
    )
    client = client_for()
    study_draft_create(
        study=study,
        client=client,
        entry_url="https://study.example.org/s/x/",
        places=10,
        reward_minor=150,
        estimated_minutes=12,
    )
    study_transition(study=study, client=client, action="publish")
    study.refresh_from_db()
    return study, client


def person(study, fake, pid, *, flags=(), review="", status=Participant.Status.COMPLETED):
    """A participant with two judgments (the first carrying `flags`), awaiting review."""
    participant = make_participant(
        study=study,
        prolific_pid=pid,
        group=PersonGroup.FAMOUS,
        status=status,
        completed_at=timezone.now() if status == Participant.Status.COMPLETED else None,
    )
    texts = [d.anonymizations.get() for d in study.descriptions.order_by("pk")]
    for position, text in enumerate(texts, start=1):
        make_judgment(
            participant=participant,
            text=text,
            position=position,
            slot=Participant.objects.filter(judgments__text=text).count() + 1,
            flags=list(flags) if position == 1 else [],
            flag_review=review if position == 1 else "",
            time_spent_ms=20_000,
        )
    sub = fake.submission_start(study.prolific_study_id, pid)
    fake.submission_set_status(sub, "AWAITING REVIEW")
    return sub


@pytest.fixture
def cohort(published, fake_prolific):
    """Clean, flagged-not-excluding, excluded, overruled, confirmed, and unfinished people."""
    study, client = published
    subs = {
        "CLEAN": person(study, fake_prolific, "CLEAN"),
        "NOTELEM": person(study, fake_prolific, "NOTELEM", flags=[NO_TELEMETRY]),
        "FAST": person(study, fake_prolific, "FAST", flags=[TOO_FAST, PASTE]),
        "OVERRULED": person(
            study, fake_prolific, "OVERRULED", flags=[TOO_FAST], review="overruled"
        ),
        "CONFIRMED": person(study, fake_prolific, "CONFIRMED", review="confirmed"),
        "UNFINISHED": person(study, fake_prolific, "UNFINISHED", status=Participant.Status.STARTED),
    }
    study_sync(study=study, client=client)
    return study, client, subs


def pids(candidates) -> list[str]:
    return [c.prolific_pid for c in candidates]


def test_the_preview_follows_the_rules_and_sends_nothing(cohort, fake_prolific):
    study, _, _ = cohort
    calls = len(fake_prolific.calls)
    approve = bulk_candidates(study, APPROVE_CLEAN)
    reject = bulk_candidates(study, REJECT_EXCLUDED)
    assert len(fake_prolific.calls) == calls
    # no_telemetry is not an excluding flag; an overruled flag keeps the answer.
    assert pids(approve) == ["CLEAN", "NOTELEM", "OVERRULED"]
    # A confirmed review excludes even without a flag; not finishing here is no exclusion.
    assert pids(reject) == ["CONFIRMED", "FAST"]
    fast = next(c for c in reject if c.prolific_pid == "FAST")
    assert fast.category == "TOO_QUICKLY"
    assert len(fast.reason) >= 100
    assert "Answered implausibly fast (1 answer)" in fast.reason
    assert "Pasted into the answer (1 answer)" in fast.reason
    assert "1 of your 2 answers were excluded" in fast.reason
    assert "1.2 s" not in fast.reason  # the detailed reasons stay with the researcher
    assert "canary" not in fast.reason  # nor does it list what else the rules check
    assert ("Answered implausibly fast", TOO_FAST["reason"], True) in fast.flag_lines
    confirmed = next(c for c in reject if c.prolific_pid == "CONFIRMED")
    assert "researcher's review" in confirmed.reason and confirmed.category == "OTHER"


def test_approve_clean_approves_only_the_clean_each_recorded(cohort, fake_prolific):
    study, client, subs = cohort
    outcome = bulk_review(
        study=study,
        client=client,
        rule=APPROVE_CLEAN,
        pids=["CLEAN", "NOTELEM", "OVERRULED", "FAST"],  # FAST is not the rule's: skipped
        user=study.owner,
    )
    assert outcome.succeeded == 3 and outcome.skipped == ["FAST"]
    statuses = {pid: fake_prolific.submissions[sub]["status"] for pid, sub in subs.items()}
    assert statuses == {
        "CLEAN": "APPROVED",
        "NOTELEM": "APPROVED",
        "OVERRULED": "APPROVED",
        "FAST": "AWAITING REVIEW",
        "CONFIRMED": "AWAITING REVIEW",
        "UNFINISHED": "AWAITING REVIEW",
    }
    actions = ProlificAction.objects.filter(kind="approve")
    assert sorted(actions.values_list("prolific_pid", flat=True)) == [
        "CLEAN",
        "NOTELEM",
        "OVERRULED",
    ]
    assert {a.created_by for a in actions} == {study.owner}
    assert {a.response["status"] for a in actions} == {"APPROVED"}
    assert bulk_candidates(study, APPROVE_CLEAN) == []


def test_reject_excluded_sends_each_reason_and_category(cohort, fake_prolific):
    study, client, subs = cohort
    edited = "Edited by the researcher: " + "your answers were pasted and too quick. " * 3
    outcome = bulk_review(
        study=study,
        client=client,
        rule=REJECT_EXCLUDED,
        pids=["FAST", "CONFIRMED"],
        user=study.owner,
        reasons={"FAST": edited},
        categories={"FAST": "LOW_EFFORT"},
    )
    assert outcome.succeeded == 2
    assert fake_prolific.rejections[subs["FAST"]] == (edited.strip(), "LOW_EFFORT")
    message, category = fake_prolific.rejections[subs["CONFIRMED"]]
    assert "exclusion rules" in message and category == "OTHER"  # the prefilled one
    fast = ProlificAction.objects.get(prolific_pid="FAST")
    assert fast.kind == "reject" and fast.reason == edited.strip()
    assert fast.response["sent_category"] == "LOW_EFFORT"
    assert fake_prolific.submissions[subs["CLEAN"]]["status"] == "AWAITING REVIEW"


def test_a_short_reason_refuses_the_whole_send(cohort, fake_prolific):
    study, client, _ = cohort
    calls = len(fake_prolific.calls)
    with pytest.raises(ProlificActionRefused, match="FAST: A rejection needs a reason"):
        bulk_review(
            study=study,
            client=client,
            rule=REJECT_EXCLUDED,
            pids=["CONFIRMED", "FAST"],
            reasons={"FAST": "too short"},
        )
    assert len(fake_prolific.calls) == calls
    assert not ProlificAction.objects.exists()


def test_a_failed_bulk_send_is_retried_and_never_sent_twice(cohort, fake_prolific):
    study, client, subs = cohort
    fake_prolific.fail_next(503, times=5)  # every try of the first participant's call
    first = bulk_review(study=study, client=client, rule=APPROVE_CLEAN, pids=["CLEAN", "NOTELEM"])
    assert [a.status for a in first.actions] == ["failed", "succeeded"]
    # Still selected by the rule, so the next preview offers it again.
    assert pids(bulk_candidates(study, APPROVE_CLEAN)) == ["CLEAN", "OVERRULED"]
    again = bulk_review(study=study, client=client, rule=APPROVE_CLEAN, pids=["CLEAN", "NOTELEM"])
    assert again.succeeded == 1 and again.skipped == ["NOTELEM"]
    calls = len(fake_prolific.calls)
    third = bulk_review(study=study, client=client, rule=APPROVE_CLEAN, pids=["CLEAN", "NOTELEM"])
    assert third.actions == [] and len(fake_prolific.calls) == calls
    assert ProlificAction.objects.count() == 2
    assert ProlificAction.objects.get(prolific_pid="CLEAN").attempts == 2
    assert fake_prolific.submissions[subs["CLEAN"]]["status"] == "APPROVED"


def test_an_approval_whose_answer_was_lost_is_recorded_as_succeeded(cohort, fake_prolific):
    study, client, subs = cohort
    fake_prolific.submission_set_status(subs["CLEAN"], "APPROVED")  # done; the answer lost
    outcome = bulk_review(study=study, client=client, rule=APPROVE_CLEAN, pids=["CLEAN"])
    action = outcome.actions[0]
    assert action.status == ProlificAction.Status.SUCCEEDED
    assert action.response["status"] == "APPROVED"


def test_someone_flagged_after_the_preview_is_skipped(cohort, fake_prolific):
    study, client, subs = cohort
    previewed = pids(bulk_candidates(study, APPROVE_CLEAN))
    Judgment.objects.filter(participant__prolific_pid="CLEAN").update(flags=[PASTE])
    outcome = bulk_review(study=study, client=client, rule=APPROVE_CLEAN, pids=previewed)
    assert outcome.skipped == ["CLEAN"]
    assert fake_prolific.submissions[subs["CLEAN"]]["status"] == "AWAITING REVIEW"


def test_the_pages_preview_then_send_and_keep_a_refused_reason(cohort, fake_prolific):
    study, _, subs = cohort
    web = logged_in(study.owner)
    prolific = web.get(reverse("researcher-prolific", kwargs={"slug": study.slug}))
    body = prolific.content.decode()
    assert "Exclusion rules" in body and "excluded</span> 1 of 2 answers" in body
    assert TOO_FAST["reason"] in body  # the researcher sees the flags' reasons
    url = reverse("researcher-prolific-bulk", kwargs={"slug": study.slug, "rule": REJECT_EXCLUDED})
    preview = web.get(url).content.decode()
    assert "CONFIRMED" in preview and "FAST" in preview and "CLEAN" not in preview
    assert "Answered implausibly fast (1 answer)" in preview  # the prefilled reason
    calls = len(fake_prolific.calls)
    refused = web.post(url, {"pid": ["FAST"], "reason-FAST": "Typed but too short"})
    assert refused.status_code == 200 and "Typed but too short" in refused.content.decode()
    assert len(fake_prolific.calls) == calls
    sent = web.post(
        url,
        {"pid": ["FAST"], "reason-FAST": "R" * 120, "category-FAST": "TOO_QUICKLY"},
    )
    assert sent.status_code == 302
    assert fake_prolific.rejections[subs["FAST"]] == ("R" * 120, "TOO_QUICKLY")
    assert fake_prolific.submissions[subs["CONFIRMED"]]["status"] == "AWAITING REVIEW"


def test_a_viewer_may_preview_but_not_send(cohort, fake_prolific):
    study, _, _ = cohort
    viewer = make_user(username="viewer-bulk")
    StudyMember.objects.create(study=study, user=viewer, role=StudyMember.Role.VIEWER)
    web = logged_in(viewer)
    url = reverse("researcher-prolific-bulk", kwargs={"slug": study.slug, "rule": APPROVE_CLEAN})
    preview = web.get(url)
    assert preview.status_code == 200 and b"Only an editor" in preview.content
    calls = len(fake_prolific.calls)
    assert web.post(url, {"pid": ["CLEAN"]}).status_code == 403
    assert len(fake_prolific.calls) == calls
    unknown = reverse("researcher-prolific-bulk", kwargs={"slug": study.slug, "rule": "pay-all"})
    assert web.get(unknown).status_code == 404


def test_the_monitor_counts_who_each_rule_selects(cohort):
    study, _, _ = cohort
    page = logged_in(study.owner).get(
        reverse("researcher-participants", kwargs={"slug": study.slug})
    )
    body = page.content.decode()
    assert "3 clean completed to approve" in body and "2 excluded to reject" in body

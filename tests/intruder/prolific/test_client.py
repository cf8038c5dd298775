"""The Prolific client against the fake server: every error path, retries, dry-run."""

from __future__ import annotations

import pytest

from intruder.prolific.client import (
    ProlificAuthError,
    ProlificError,
    ProlificNotConfigured,
    ProlificNotFound,
    ProlificUnavailable,
    StudyDraft,
)

ENTRY = (
    "https://study.example.org/s/x/?PROLIFIC_PID={{%PROLIFIC_PID%}}"
    "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)


def draft(**fields) -> StudyDraft:
    values = {
        "name": "Who is it?",
        "internal_name": "winter",
        "description": "Read short texts.",
        "external_study_url": ENTRY,
        "completion_code": "C0DE42",
        "completion_action": "MANUALLY_REVIEW",
        "total_available_places": 20,
        "reward": 150,
        "estimated_completion_time": 12,
        **fields,
    }
    return StudyDraft(**values)


def test_a_draft_is_created_published_paused_and_resumed(fake_prolific, client_for):
    client = client_for()
    study = client.study_create(draft())
    assert study["status"] == "UNPUBLISHED"
    assert study["completion_codes"][0]["actions"] == [{"action": "MANUALLY_REVIEW"}]
    assert study["prolific_id_option"] == "url_parameters"
    for action, status in [("PUBLISH", "ACTIVE"), ("PAUSE", "PAUSED"), ("START", "ACTIVE")]:
        assert client.study_transition(study["id"], action)["status"] == status
    assert client.study_get(study["id"])["status"] == "ACTIVE"


def test_a_wrong_token_is_a_clear_401(fake_prolific, client_for):
    with pytest.raises(ProlificAuthError, match="PROLIFIC_API_TOKEN") as error:
        client_for(token="not-the-token").study_get("abc")
    assert error.value.status == 401
    assert fake_prolific.token not in str(error.value)


def test_a_403_names_the_workspace(fake_prolific, client_for):
    fake_prolific.fail_next(403)
    with pytest.raises(ProlificAuthError, match="403"):
        client_for().study_get("abc")


def test_an_unknown_study_is_a_clear_404_and_not_retried(fake_prolific, client_for):
    with pytest.raises(ProlificNotFound, match="Prolific study ID"):
        client_for().study_get("000000000000000000000000")
    assert len(fake_prolific.calls) == 1


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_429_and_5xx_are_retried_with_back_off(fake_prolific, client_for, status):
    waits = []
    client = client_for(backoff=0.5, sleep=waits.append)
    study = client.study_create(draft())
    fake_prolific.fail_next(status, times=2)
    assert client.study_get(study["id"])["id"] == study["id"]
    assert len(waits) == 2
    if status != 429:  # 429 honours Retry-After (0 here); 5xx backs off exponentially
        assert waits == [0.5, 1.0]


def test_retries_give_up_with_a_clear_error(fake_prolific, client_for):
    fake_prolific.fail_next(503, times=10)
    with pytest.raises(ProlificUnavailable, match="after 3 tries"):
        client_for(max_retries=2).study_get("abc")


def test_an_unreachable_prolific_times_out_and_is_reported(client_for):
    from intruder.prolific.client import ProlificClient

    client = ProlificClient(
        token="t", base_url="http://127.0.0.1:9/api/v1/", timeout=0.5, max_retries=1, backoff=0
    )
    with pytest.raises(ProlificUnavailable, match="ConnectError"):
        client.study_get("abc")


def test_other_4xx_carry_prolific_s_answer(fake_prolific, client_for):
    with pytest.raises(ProlificError) as error:
        client_for().study_create(draft(external_study_url="https://example.org/no-params"))
    assert error.value.status == 400
    assert "external_study_url" in str(error.value)


def test_no_token_means_not_configured():
    from intruder.prolific.client import ProlificClient

    with pytest.raises(ProlificNotConfigured):
        ProlificClient(token="").study_get("abc")


def test_dry_run_prints_the_calls_and_sends_nothing(fake_prolific, client_for):
    printed = []
    client = client_for(dry_run=True, echo=printed.append)
    assert client.study_create(draft()) == {"dry_run": True}
    client.study_transition("abc", "PUBLISH")
    client.bonus_setup("abc", [("PID1", 1.5)])
    assert fake_prolific.calls == []
    assert printed[0].startswith("[dry-run] POST http://127.0.0.1:")
    assert '"action": "PUBLISH"' in printed[1]
    assert "PID1,1.50" in printed[2]
    assert all(fake_prolific.token not in line for line in printed)
    assert fake_prolific.token not in repr(client)


def test_submissions_follow_pagination_and_bonuses_pay_once(fake_prolific, client_for):
    fake_prolific.page_size = 2
    client = client_for()
    study = client.study_create(draft())
    ids = [fake_prolific.submission_start(study["id"], f"PID{i}") for i in range(5)]
    subs = client.submissions_list(study["id"])
    assert sorted(s.id for s in subs) == sorted(ids)
    bonus = client.bonus_setup(study["id"], [("PID1", 0.5), ("PID2", 1.0)])
    client.bonus_pay(bonus["id"])
    with pytest.raises(ProlificError, match="already been paid"):
        client.bonus_pay(bonus["id"])
    assert len(fake_prolific.payments) == 2


def test_subscription_handshake_with_x_hook_secret(fake_prolific, client_for):
    client = client_for()
    subscription, hook_secret = client.hook_subscribe(
        workspace_id=fake_prolific.workspace_id,
        event_type="submission.status.change",
        target_url="https://platform.example.org/prolific/webhook/",
    )
    assert hook_secret
    with pytest.raises(ProlificError):
        client.hook_confirm(subscription["id"], "wrong")
    assert client.hook_confirm(subscription["id"], hook_secret)["is_enabled"] is True

"""Writers: consent, three descriptions (famous, semifamous, fictitious), debrief, Prolific."""

import random
import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from intruder.enrolment import EnrolmentRefused
from intruder.models import Description, Participant, PersonGroup, Study, WritingTask
from intruder.services.participants import participant_consent_give, participant_enroll
from intruder.services.writing import description_submit, writing_tasks_assign
from tests.intruder.factories import make_participant, make_study, make_target

pytestmark = pytest.mark.django_db

MIN_CHARS = 120
LONG_TEXT = "This person has a long and varied career, told here in plenty of words. " * 3


@pytest.fixture
def study():
    study = make_study(kind=Study.Kind.COLLECTION, min_description_chars=MIN_CHARS)
    for group in (PersonGroup.FICTITIOUS, PersonGroup.SEMIFAMOUS, PersonGroup.FAMOUS):
        for _ in range(4):
            make_target(study=study, group=group)
    return study


def enter(client, study, pid="WRITERPID0001"):
    response = client.get(
        f"{reverse('participant-entry', kwargs={'slug': study.slug})}?PROLIFIC_PID={pid}"
    )
    return response["Location"]


def test_writer_gets_famous_then_semifamous_then_fictitious(study):
    participant = make_participant(study=study)
    participant_consent_give(participant=participant, rng=random.Random(1))
    groups = [t.target.group for t in participant.writing_tasks.order_by("position")]
    assert groups == [PersonGroup.FAMOUS, PersonGroup.SEMIFAMOUS, PersonGroup.FICTITIOUS]


def test_targets_are_drawn_at_random_from_the_pool_with_the_injected_rng(study):
    drawn = set()
    for seed in range(12):
        participant = make_participant(study=study)
        tasks = writing_tasks_assign(participant=participant, rng=random.Random(seed))
        drawn.add(tasks[0].target_id)
        again = [t.target_id for t in tasks]
        other = make_participant(study=study)
        assert [
            t.target_id for t in writing_tasks_assign(participant=other, rng=random.Random(seed))
        ] == again
    assert len(drawn) >= 3  # several of the 4 famous targets are used


def test_study_groups_limit_what_writers_describe(study):
    study.groups = [PersonGroup.FICTITIOUS]
    study.save()
    participant = make_participant(study=study)
    tasks = writing_tasks_assign(participant=participant, rng=random.Random(0))
    assert [t.target.group for t in tasks] == [PersonGroup.FICTITIOUS]


def test_consent_posted_twice_draws_targets_once(client, study):
    home = enter(client, study)
    client.post(f"{home}consent/", {"decision": "agree"})
    client.post(f"{home}consent/", {"decision": "agree"})
    assert WritingTask.objects.count() == 3


def test_description_shorter_than_the_minimum_is_refused_on_the_server(study):
    participant = make_participant(study=study)
    participant_consent_give(participant=participant, rng=random.Random(0))
    with pytest.raises(ValidationError) as error:
        description_submit(participant=participant, position=1, text="  " + "x" * 119 + "\r\n")
    assert f"at least {MIN_CHARS}" in str(error.value)
    assert not Description.objects.exists()
    description = description_submit(participant=participant, position=1, text="x" * 120)
    assert description.text == "x" * 120


def test_description_line_breaks_are_counted_like_the_page_counter(study):
    participant = make_participant(study=study)
    participant_consent_give(participant=participant, rng=random.Random(0))
    # 60 + "\r\n" + 59 = 121 characters in the browser's form data, 120 on the page.
    description = description_submit(
        participant=participant, position=1, text="a" * 60 + "\r\n" + "b" * 59
    )
    assert description.text == "a" * 60 + "\n" + "b" * 59


def test_double_submit_keeps_the_first_description(study):
    participant = make_participant(study=study)
    participant_consent_give(participant=participant, rng=random.Random(0))
    first = description_submit(participant=participant, position=1, text=LONG_TEXT)
    second = description_submit(participant=participant, position=1, text=LONG_TEXT + "more")
    assert first.pk == second.pk
    assert Description.objects.get().text == LONG_TEXT.strip()


def test_full_writer_flow_ends_at_the_prolific_completion_url(client, study):
    home = enter(client, study)
    assert b"Consent" in client.get(home).content
    client.post(f"{home}consent/", {"decision": "agree"})
    participant = Participant.objects.get()
    tasks = list(participant.writing_tasks.order_by("position").select_related("target"))

    famous_page = client.get(home).content.decode()
    assert f"Describe {tasks[0].target.name}" in famous_page
    assert 'id="char-count"' in famous_page and f'data-min="{MIN_CHARS}"' in famous_page
    client.post(f"{home}write/", {"position": 1, "text": LONG_TEXT})

    semifamous_page = client.get(home).content.decode()
    assert tasks[1].target.wikipedia_url in semifamous_page
    assert 'rel="noopener noreferrer"' in semifamous_page
    client.post(f"{home}write/", {"position": 2, "text": LONG_TEXT})

    fictitious_page = client.get(home).content.decode()
    profile = tasks[2].target.profile
    for key in ("full_name", "job", "country", "relationship_status"):
        assert profile[key] in fictitious_page
    assert f"<td>{profile['age']}</td>" in fictitious_page
    client.post(f"{home}write/", {"position": 3, "text": LONG_TEXT})

    debrief = client.get(home)
    assert study.debrief_text.encode() in debrief.content
    finish = client.post(f"{home}finish/")
    assert finish.status_code == 302
    assert finish["Location"] == (
        f"https://app.prolific.com/submissions/complete?cc={study.completion_code}"
    )
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    assert participant.completed_at is not None
    assert Description.objects.filter(writer=participant).count() == 3


def test_too_short_description_redirects_and_reshows_the_page_with_the_text_kept(client, study):
    home = enter(client, study)
    client.post(f"{home}consent/", {"decision": "agree"})
    response = client.post(f"{home}write/", {"position": 1, "text": "Too short but kept"})
    # Post/redirect/get on errors too: the browser's history holds only the GET page.
    assert response.status_code == 302 and response["Location"] == home
    for _reload in range(2):
        body = client.get(home).content.decode()
        assert f"at least {MIN_CHARS} characters" in body
        assert re.search(r"<textarea[^>]*>Too short but kept</textarea>", body)
    assert not Description.objects.exists()


def test_an_accepted_description_forgets_the_rejected_one(client, study):
    home = enter(client, study)
    client.post(f"{home}consent/", {"decision": "agree"})
    client.post(f"{home}write/", {"position": 1, "text": "Too short"})
    assert Participant.objects.get().form_state["task"] == "write:1"
    client.post(f"{home}write/", {"position": 1, "text": LONG_TEXT})
    assert Participant.objects.get().form_state == {}
    body = client.get(home).content.decode()
    assert "Description 2 of 3" in body
    assert "Too short" not in body and "errorlist" not in body


def test_reload_shows_the_same_task_and_stale_posts_change_nothing(client, study):
    home = enter(client, study)
    client.post(f"{home}consent/", {"decision": "agree"})
    first_target = Participant.objects.get().writing_tasks.get(position=1).target.name
    for _reload in range(2):
        assert f"Describe {first_target}" in client.get(home).content.decode()
    client.post(f"{home}write/", {"position": 1, "text": LONG_TEXT})
    # The same form posted again from a stale tab, and a post for a task not reached yet.
    client.post(f"{home}write/", {"position": 1, "text": "changed " + LONG_TEXT})
    client.post(f"{home}write/", {"position": 3, "text": LONG_TEXT})
    assert list(Description.objects.values_list("text", flat=True)) == [LONG_TEXT.strip()]
    assert b"Description 2 of 3" in client.get(home).content


def test_finish_before_the_last_description_is_refused(client, study):
    home = enter(client, study)
    client.post(f"{home}consent/", {"decision": "agree"})
    assert client.post(f"{home}finish/")["Location"] == home
    assert Participant.objects.get().status == Participant.Status.STARTED


def test_writer_enrolment_in_a_study_without_targets_is_refused(client):
    empty = make_study(kind=Study.Kind.COLLECTION)
    with pytest.raises(EnrolmentRefused):
        participant_enroll(study=empty, prolific_pid="ABC")


def test_a_rejected_text_with_nul_characters_is_kept_without_them(client, study):
    # PostgreSQL's jsonb cannot store NUL: the kept answer drops it rather than failing.
    home = enter(client, study)
    client.post(f"{home}consent/", {"decision": "agree"})
    response = client.post(f"{home}write/", {"position": 1, "text": "Too\x00 short"})
    assert response.status_code == 302
    page = client.get(home).content
    assert b">Too short</textarea>" in page
    assert b"Null characters are not allowed" in page

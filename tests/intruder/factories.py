"""Test-data builders shared by the intruder tests (made-up people only).

Each builder takes keyword overrides and fills everything else with valid defaults, so a
test states only what matters to it. Add functions; do not change others' signatures.
"""

from __future__ import annotations

import itertools
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client

from intruder.models import (
    AnonymizedText,
    Assignment,
    Description,
    Job,
    Judgment,
    Participant,
    PersonGroup,
    Study,
    StudyMember,
    TargetPerson,
)

_seq = itertools.count(1)

# A valid "new study" form, as the researcher page posts it.
STUDY_FORM = {
    "slug": "winter-intruders",
    "title": "Winter intruder test",
    "kind": "intruder",
    "items_per_participant": 10,
    "judgments_per_text": 3,
    "min_description_chars": 500,
    "groups": ["famous", "semifamous"],
    "consent_text": "You agree.",
    "instructions_text": "Play an adversary.",
    "debrief_text": "Thanks.",
    "completion_code": "C0DE42",
    "time_limit_minutes": 45,
    "identification_threshold": 0.75,
    "identification_rule": "best_match",
    "identified_rule": "mean_cosine",
    "is_open": "on",
}


def make_user(*, username: str | None = None, password: str = "pw-for-tests-1", **extra: Any):
    """Create an active researcher account."""
    username = username or f"researcher{next(_seq)}"
    return get_user_model().objects.create_user(
        username=username, password=password, email=f"{username}@example.org", **extra
    )


def make_study(*, owner: Any = None, kind: str = Study.Kind.INTRUDER, **fields: Any) -> Study:
    """Create a study (an intruder test by default) owned by `owner` or a new user."""
    n = next(_seq)
    defaults: dict[str, Any] = {
        "slug": f"study-{n}",
        "title": f"Study {n}",
        "kind": kind,
        "owner": owner or make_user(),
        "consent_text": "You agree to take part.",
        "instructions_text": "Play an adversary.",
        "debrief_text": "Thank you.",
        "completion_code": f"CODE{n}",
        # Studies start closed (docs/researchers.md); most tests need participants in.
        "is_open": True,
    }
    defaults.update(fields)
    return Study.objects.create(**defaults)


def make_member(*, study: Study, user: Any = None, role: str = StudyMember.Role.VIEWER):
    """Add `user` (or a new user) to `study` with `role`; return the user."""
    user = user or make_user()
    StudyMember.objects.create(study=study, user=user, role=role)
    return user


def make_target(
    *, study: Study, group: str = PersonGroup.FICTITIOUS, name: str | None = None, **fields: Any
) -> TargetPerson:
    """Create a target person of `study`."""
    n = next(_seq)
    defaults: dict[str, Any] = {
        "key": f"{group}_{n}",
        "name": name or f"Quentin Marlowe{n}",
        "group": group,
    }
    if group == PersonGroup.SEMIFAMOUS:
        defaults["wikipedia_url"] = f"https://en.wikipedia.org/wiki/Person_{n}"
    if group == PersonGroup.FICTITIOUS:
        defaults["profile"] = {
            "full_name": defaults["name"],
            "relationship_status": "single",
            "job": "lighthouse keeper",
            "age": 47,
            "country": "Iceland",
        }
    defaults.update(fields)
    return TargetPerson.objects.create(study=study, **defaults)


def make_description(
    *, study: Study, target: TargetPerson | None = None, text: str | None = None, **fields: Any
) -> Description:
    """Create a description of `target` (or of a new fictitious target)."""
    target = target or make_target(study=study)
    text = text or f"{target.name} keeps the lighthouse at the end of the fjord. " * 3
    return Description.objects.create(study=study, target=target, text=text, **fields)


def make_text(
    *,
    study: Study,
    description: Description | None = None,
    status: str = AnonymizedText.Status.RELEASED,
    text: str | None = None,
    **fields: Any,
) -> AnonymizedText:
    """Create an anonymized text (released by default) whose name mentions are placeholders."""
    description = description or make_description(study=study)
    name = description.target.name
    spans = []
    start = description.text.find(name)
    while start >= 0:
        spans.append(
            {
                "start": start,
                "end": start + len(name),
                "text": name,
                "category": "PERSON_FIRSTNAME",
                "placeholder": "PERSON_FIRSTNAME_1",
                "score": 0.99,
            }
        )
        start = description.text.find(name, start + len(name))
    rendered = text or description.text.replace(name, "PERSON_FIRSTNAME_1")
    fields.setdefault("spans", spans)
    return AnonymizedText.objects.create(
        description=description, text=rendered, status=status, **fields
    )


def make_texts(
    *, study: Study, count: int, group: str = PersonGroup.FICTITIOUS, **fields: Any
) -> list[AnonymizedText]:
    """Create `count` released texts, each describing its own new target of `group`."""
    return [
        make_text(
            study=study,
            description=make_description(study=study, target=make_target(study=study, group=group)),
            **fields,
        )
        for _ in range(count)
    ]


def make_participant(*, study: Study, **fields: Any) -> Participant:
    """Enrol a participant with a fresh Prolific PID."""
    n = next(_seq)
    defaults: dict[str, Any] = {
        "prolific_pid": f"PID{n:020d}",
        "prolific_study_id": "STUDY1",
        "prolific_session_id": f"SESSION{n}",
    }
    defaults.update(fields)
    return Participant.objects.create(study=study, **defaults)


def make_assignment(
    *,
    participant: Participant,
    text: AnonymizedText,
    position: int = 1,
    slot: int = 1,
    status: str = Assignment.Status.ACTIVE,
) -> Assignment:
    """Assign `text` to `participant` holding `slot`."""
    return Assignment.objects.create(
        participant=participant, text=text, position=position, slot=slot, status=status
    )


def make_judgment(
    *, participant: Participant, text: AnonymizedText, position: int = 1, slot: int = 1, **fields
) -> Judgment:
    """Create a completed assignment of `text` and the participant's judgment on it."""
    assignment = make_assignment(
        participant=participant,
        text=text,
        position=position,
        slot=slot,
        status=Assignment.Status.COMPLETED,
    )
    defaults: dict[str, Any] = {"self_identified": False, "other_knowledge": "A sailor."}
    defaults.update(fields)
    return Judgment.objects.create(
        assignment=assignment, participant=participant, text=text, **defaults
    )


def make_job(*, study: Study | None = None, created_by: Any = None, **fields: Any) -> Job:
    """Create a job row (no worker runs it)."""
    defaults: dict[str, Any] = {"kind": "anonymize_study", "status": Job.Status.QUEUED}
    defaults.update(fields)
    return Job.objects.create(study=study, created_by=created_by, **defaults)


def logged_in(user) -> Client:
    """Return a test client with ``user`` logged in."""
    client = Client()
    client.force_login(user)
    return client

"""One exception base, one DRF handler: every error the app raises on purpose has its answer.

The table names each IntruderError class with the status and body an API view answers it
with; a class missing from the table fails the coverage test, so a new error class cannot
reach a client as a 500 unnoticed.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from intruder.analysis.frames import AnalysisInputError
from intruder.annotation.evaluation import EvaluationError
from intruder.annotation.services import SaveConflict
from intruder.enrolment import EnrolmentRefused
from intruder.exceptions import IntruderError
from intruder.exchange.errors import ImportRunning, ImportValidationError, RowError
from intruder.llm_intruder.services import LLMJobError
from intruder.prolific.client import (
    ProlificAuthError,
    ProlificError,
    ProlificNotConfigured,
    ProlificNotFound,
    ProlificUnavailable,
)
from intruder.prolific.services import ProlificActionRefused
from intruder.prolific.webhooks import DeliveryRefused
from intruder.rehearsal.launch import RehearsalRefused
from intruder.risk.attack_runs import AttackRunBusy, AttackRunError
from intruder.risk.background_uploads import BackgroundUploadError
from intruder.risk.guarding import GuardRunError
from intruder.services.assignment import AssignmentBusy
from intruder.services.familiarity import FamiliarityRefused
from intruder.services.jobs import (
    ImproperlyConfiguredBackend,
    JobAlreadyActive,
    JobCancelled,
    JobError,
    UnknownTaskError,
)
from intruder.services.judgments import JudgmentRejected
from intruder.services.review import (
    ReleasedTextEditError,
    SpanEditError,
    StaleRevisionError,
    StatusError,
)

# (error, status, body): the bodies are those the API answered before the handler.
ANSWERS: list[tuple[IntruderError, int, dict[str, Any]]] = [
    (
        JobError("only failed jobs can be retried"),
        400,
        {"status": ["only failed jobs can be retried"]},
    ),
    (
        JobAlreadyActive(None),
        400,
        {"status": ["a job of this kind is already active for this study"]},
    ),
    (JobCancelled("job 3 is no longer running"), 409, {"detail": "job 3 is no longer running"}),
    (ImproperlyConfiguredBackend("no backend 'x'"), 503, {"detail": "no backend 'x'"}),
    (UnknownTaskError("no job kind 'x'"), 400, {"detail": "no job kind 'x'"}),
    (StaleRevisionError("text 1 changed"), 409, {"expected_revision": ["text 1 changed"]}),
    (SpanEditError("span 0-9 lies outside"), 400, {"spans": ["span 0-9 lies outside"]}),
    (
        StatusError("cannot change a draft text to draft"),
        400,
        {"status": ["cannot change a draft text to draft"]},
    ),
    (
        ReleasedTextEditError("a released text cannot be edited"),
        400,
        {"spans": ["a released text cannot be edited"]},
    ),
    (LLMJobError("LLM_BASE_URL is not set"), 400, {"detail": "LLM_BASE_URL is not set"}),
    (AttackRunError("unknown attack 'x'"), 400, {"non_field_errors": ["unknown attack 'x'"]}),
    (GuardRunError("k must be at least 2"), 400, {"non_field_errors": ["k must be at least 2"]}),
    (
        AttackRunBusy("attack run job 4 is still queued"),
        409,
        {"detail": "attack run job 4 is still queued"},
    ),
    (
        SaveConflict({"revision": 3, "mentions": []}),
        409,
        {"detail": "changed elsewhere", "current": {"revision": 3, "mentions": []}},
    ),
    (AssignmentBusy("no free slot"), 503, {"detail": "no free slot"}),
    (JudgmentRejected(JudgmentRejected.EXPIRED), 409, {"detail": "expired"}),
    (FamiliarityRefused("already answered"), 409, {"detail": "already answered"}),
    (RehearsalRefused("at most 30 participants"), 400, {"detail": "at most 30 participants"}),
    (BackgroundUploadError("line 2: no text"), 400, {"detail": "line 2: no text"}),
    (
        ImportValidationError([RowError(2, "target", "missing")]),
        400,
        {"detail": "1 error(s), nothing imported: line 2, field 'target': missing"},
    ),
    (
        ImportRunning([RowError(0, "", "busy")]),
        409,
        {"detail": "1 error(s), nothing imported: line 0, field '': busy"},
    ),
    (EnrolmentRefused(EnrolmentRefused.FULL), 403, {"detail": "full"}),
    (ProlificError("Prolific answered 500", status=500), 502, {"detail": "Prolific answered 500"}),
    (ProlificAuthError("token refused", status=401), 502, {"detail": "token refused"}),
    (ProlificNotFound("no such study", status=404), 404, {"detail": "no such study"}),
    (ProlificUnavailable("Prolific is down"), 503, {"detail": "Prolific is down"}),
    (
        ProlificNotConfigured("PROLIFIC_TOKEN is not set"),
        503,
        {"detail": "PROLIFIC_TOKEN is not set"},
    ),
    (
        ProlificActionRefused("a rejection needs a reason"),
        400,
        {"detail": "a rejection needs a reason"},
    ),
    (DeliveryRefused("bad signature"), 403, {"detail": "bad signature"}),
    (DeliveryRefused("stale delivery", status=400), 400, {"detail": "stale delivery"}),
    (
        AnalysisInputError("judgments frame lacks column(s): x"),
        400,
        {"detail": "judgments frame lacks column(s): x"},
    ),
    (EvaluationError("no annotations yet"), 400, {"detail": "no annotations yet"}),
]


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def _answer(error: Exception) -> Any:
    class Raising(APIView):
        authentication_classes: list = []
        permission_classes: list = []

        def get(self, request: Any) -> Any:
            raise error

    return Raising.as_view()(APIRequestFactory().get("/"))


def test_every_error_class_of_the_app_has_an_answer_in_the_table() -> None:
    assert {type(error) for error, _, _ in ANSWERS} == _subclasses(IntruderError)


@pytest.mark.parametrize(
    ("error", "status", "body"), ANSWERS, ids=[type(e).__name__ for e, _, _ in ANSWERS]
)
def test_an_error_of_the_app_gets_its_status_and_body_never_a_500(error, status, body) -> None:
    response = _answer(error)
    assert (response.status_code, response.data) == (status, body)


def test_a_model_validation_error_is_a_400_naming_the_fields() -> None:
    response = _answer(DjangoValidationError({"items_per_participant": ["at most 200"]}))
    assert (response.status_code, response.data) == (
        400,
        {"items_per_participant": ["at most 200"]},
    )
    response = _answer(DjangoValidationError("the study has no source studies"))
    assert response.status_code == 400
    assert response.data == {"non_field_errors": ["the study has no source studies"]}


def test_class_names_are_unique_across_the_app() -> None:
    names = [cls.__name__ for cls in _subclasses(IntruderError)]
    assert len(names) == len(set(names))

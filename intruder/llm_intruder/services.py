"""Adapter to the LLM methods: anonymize a study with an LLM prompt, and let an LLM play the
open-world intruder on a study's texts. Both run as background jobs with progress.

The endpoint comes from the environment (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY; see
docs/configuration.md), never from a page, a form or an export. Starting a job checks the
settings at once (a clear error on the page or in the API); the job checks the endpoint
before any text is sent. Every answer is cached on disk, so a retried job pays only for
what it did not receive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction

from intruder.exceptions import IntruderError
from intruder.llm_intruder.models import LLMGuess
from intruder.models import AnonymizedText, Job, Study
from intruder.selectors.persons import study_persons
from intruder.services.anonymization import span_to_dict
from intruder.services.jobs import JobCancelled, job_start

if TYPE_CHECKING:
    from llm import LLMClient, LLMSettings

LLM_METHOD_PREFIX = "llm-"
# Texts handed to the client per round: progress is reported and saved after each.
ROUND = 16
# A guessed "name" is kept to this many characters (the answer itself is bounded by the
# client's LLM_MAX_ANSWER_CHARS).
MAX_NAME_CHARS = 200


class LLMJobError(IntruderError):
    """Settings an LLM job cannot use; the message says which and why."""


def llm_method(prompt: str) -> str:
    """Return the stored method name of texts anonymized with `prompt` ("llm-paper002")."""
    return f"{LLM_METHOD_PREFIX}{prompt}"


def llm_settings() -> LLMSettings:
    """Return the endpoint settings from the environment, checked (LLMJobError if unusable)."""
    from llm import LLMSettings, LLMUnavailable

    try:
        settings = LLMSettings.from_env()
        settings.require_endpoint()
    except (ValueError, LLMUnavailable) as error:
        raise LLMJobError(str(error)) from None
    return settings


def _model_version(settings: LLMSettings, prompt: str) -> str:
    """Return the model and sampling in the 100 characters of AnonymizedText.model_version."""
    sampling = settings.sampling()
    return (
        f"llm:{prompt}:{sampling['model']} t={sampling['temperature']} "
        f"seed={sampling['seed']} max={sampling['max_tokens']} json={int(sampling['json_mode'])}"
    )[:100]


def _client(settings: LLMSettings, progress: Callable[..., None]) -> LLMClient:
    """Return a client that stops sending within a second of the job's cancellation."""
    from llm import LLMClient

    return LLMClient(settings, should_stop=getattr(progress, "cancelled", None))


def _enqueue(kind: str, study: Study, user: Any, params: dict[str, Any]) -> Job:
    """Queue the job, or refuse (LLMJobError) while one of its kind is queued or running."""
    job, created = job_start(kind=kind, study=study, params=params, created_by=user)
    if not created:
        raise LLMJobError(f"job {job.pk} of this kind is already {job.status}")
    return job


def llm_anonymization_start(*, study: Study, user: Any, prompt: str) -> Job:
    """Queue an anonymization of the study's descriptions with an LLM prompt of paper 002."""
    from anonymize.llm_prompts import PROMPTS

    if prompt not in PROMPTS:
        raise LLMJobError(f"unknown prompt {prompt!r}; choose from {sorted(PROMPTS)}")
    llm_settings()
    if not study.descriptions.exists():
        raise LLMJobError("the study has no descriptions to anonymize")
    return _enqueue(Job.Kind.ANONYMIZE_STUDY, study, user, {"llm_prompt": prompt})


def anonymize_study_with_llm(
    *, study: Study, progress: Callable[..., None], prompt: str
) -> dict[str, Any]:
    """Anonymize every description without a `llm-<prompt>` text yet, saving each as made.

    A text whose answer stays unusable is listed with its reason under "failed" and left
    without an anonymization (nothing unreviewed or unmasked is stored); retrying the job
    asks again for those only.
    """
    from anonymize.llm import LLMAnonymizer, LLMOutcome
    from llm.errors import LLMCancelled

    settings = llm_settings()
    method = llm_method(prompt)
    descriptions = study.descriptions.order_by("id")
    total = descriptions.count()
    pending = list(descriptions.exclude(anonymizations__method=method))
    done = total - len(pending)
    progress(done, total, "already anonymized" if done else "checking the LLM endpoint")
    created, failed = 0, []
    with _client(settings, progress) as client:
        anonymizer = LLMAnonymizer(client, prompt)
        client.check()  # before any text is sent
        version = _model_version(settings, prompt)
        for start in range(0, len(pending), ROUND):
            batch = pending[start : start + ROUND]
            try:
                outcomes = client.complete_many(
                    [lambda d=d: anonymizer.anonymize_one(d.text) for d in batch]
                )
            except LLMCancelled as stop:
                raise JobCancelled(str(stop)) from None
            for description, outcome in zip(batch, outcomes, strict=True):
                reason = outcome.error_reason if isinstance(outcome, LLMOutcome) else str(outcome)
                if reason:
                    failed.append({"description": description.pk, "reason": reason})
                    continue
                try:
                    with transaction.atomic():
                        AnonymizedText.objects.create(
                            description=description,
                            method=method,
                            model_version=version,
                            text=outcome.text,
                            spans=[span_to_dict(s) for s in outcome.spans],
                        )
                    created += 1
                except IntegrityError:
                    pass  # another attempt stored it first
            done += len(batch)
            progress(done, total, f"{method}: {len(failed)} failed so far")
        usage = client.usage.to_dict()
    return {
        "method": method,
        "created": created,
        "failed": failed,
        "total": total,
        "llm": {"prompt": prompt, **settings.sampling()},
        "usage": usage,
    }


def llm_intruder_start(*, study: Study, user: Any, methods: Sequence[str] = (), k: int = 3) -> Job:
    """Queue the open-world LLM intruder on the study's anonymized texts of `methods`."""
    present = set(
        AnonymizedText.objects.filter(description__study=study).values_list("method", flat=True)
    )
    methods = list(dict.fromkeys(methods)) or sorted(present)
    unknown = sorted(set(methods) - present)
    if unknown or not methods:
        raise LLMJobError(f"the study has no texts of method(s) {unknown or methods}")
    if not 1 <= int(k) <= 10:
        raise LLMJobError(f"k (names asked for) must lie between 1 and 10, got {k}")
    llm_settings()
    return _enqueue(Job.Kind.LLM_INTRUDER_STUDY, study, user, {"methods": methods, "k": int(k)})


def llm_intruder_run(*, job: Job, progress: Callable[..., None]) -> dict[str, Any]:
    """Ask who each text describes and score the first name as a human guess is scored.

    Each answer is stored as an `LLMGuess` row as its round finishes, so a page shows them
    while the job runs and a retry asks only for the texts without one; the job's result
    keeps the counts and settings only.
    """
    from attacks.llm import guess_identities
    from llm.errors import LLMCancelled

    study = job.study
    settings = llm_settings()
    texts = list(
        AnonymizedText.objects.filter(description__study=study, method__in=job.params["methods"])
        .select_related("description__target")
        .order_by("id")
    )
    answered = set(job.llm_guesses.values_list("anonymized_text_id", flat=True))
    pending = [t for t in texts if t.pk not in answered]
    done = len(texts) - len(pending)
    progress(done, len(texts), "checking the LLM endpoint")
    summary: dict[str, Any] = {}
    persons = study_persons(study)
    with _client(settings, progress) as client:
        for start in range(0, len(pending), ROUND):
            batch = pending[start : start + ROUND]
            targets = {str(t.pk): t.description.target for t in batch}
            try:
                guesses = guess_identities(
                    client,
                    {str(t.pk): t.text for t in batch},
                    {i: target.name for i, target in targets.items()},
                    {i: list(target.aliases or ()) for i, target in targets.items()},
                    k=int(job.params.get("k", 3)),
                    threshold=study.identification_threshold,
                    persons=persons,
                    true_keys={i: target.key for i, target in targets.items()},
                    rule=study.identification_rule,
                )
            except LLMCancelled as stop:
                raise JobCancelled(str(stop)) from None
            LLMGuess.objects.bulk_create(
                [
                    LLMGuess(
                        job=job,
                        anonymized_text_id=int(guess.doc_id),
                        guesses=[name[:MAX_NAME_CHARS] for name in guess.guesses],
                        cosine=guess.score.cosine if guess.score else None,
                        identified=guess.identified,
                        named_other=guess.score.named_other if guess.score else None,
                        matched_alias=(guess.score.matched_alias if guess.score else "")[:200],
                        error_reason=guess.error_reason[:40],
                    )
                    for guess in guesses
                ],
                ignore_conflicts=True,  # a retry racing a stale attempt stores each text once
            )
            done += len(batch)
            summary = {
                "answered": done,
                "texts": len(texts),
                "llm": settings.sampling(),
                "threshold": study.identification_threshold,
                "identification_rule": study.identification_rule,
                "usage": client.usage.to_dict(),
            }
            Job.objects.filter(pk=job.pk).update(result=summary)
            progress(done, len(texts), "asked the LLM who is described")
    return summary or {
        "answered": done,
        "texts": len(texts),
        "llm": settings.sampling(),
        "threshold": study.identification_threshold,
        "identification_rule": study.identification_rule,
    }

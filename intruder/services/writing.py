"""Writers: draw the targets to describe and store their descriptions."""

from __future__ import annotations

import random
import unicodedata

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from intruder.evidence.flags import description_flags
from intruder.evidence.selectors import study_rules
from intruder.evidence.telemetry import telemetry_parse
from intruder.models import MAX_DESCRIPTION_CHARS, Description, Participant, Study, WritingTask
from intruder.selectors.participant import study_groups, writer_target_pool


def writing_tasks_assign(
    *, participant: Participant, rng: random.Random | None = None
) -> list[WritingTask]:
    """Draw one target at random per group, in the order famous, semifamous, fictitious.

    Groups the study does not show, or that have no targets, are skipped.
    """
    rng = rng or random.SystemRandom()
    tasks = []
    position = 0
    for group in study_groups(study=participant.study):
        pool = list(writer_target_pool(study=participant.study, group=group))
        if not pool:
            continue
        position += 1
        tasks.append(
            WritingTask.objects.create(
                participant=participant, target=rng.choice(pool), position=position
            )
        )
    return tasks


def description_text_normalize(text: str) -> str:
    """Return the text as stored and counted: NFC, browser line breaks unified, ends stripped.

    Its length counts code points after NFC, so "é" typed as e + combining accent is one
    character and an emoji outside the BMP is one; participant.js counts the same way.
    """
    text = unicodedata.normalize("NFC", text or "")
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def description_validate(*, study: Study, text: str) -> str:
    """Return the text as it would be stored, or raise ValidationError (too short or long)."""
    cleaned = description_text_normalize(text)
    minimum = study.min_description_chars
    if len(cleaned) < minimum:
        raise ValidationError(
            {
                "text": f"Please write at least {minimum} characters "
                f"(you have written {len(cleaned)})."
            }
        )
    if len(cleaned) > MAX_DESCRIPTION_CHARS:
        raise ValidationError(
            {"text": f"Please keep the description under {MAX_DESCRIPTION_CHARS} characters."}
        )
    return cleaned


def description_submit(
    *, participant: Participant, position: int, text: str, telemetry: str | None = None
) -> Description:
    """Store the writer's description for the task at `position`.

    Enforces the study's minimum length. Flags a pasted or implausibly fast description
    from the browser's `telemetry` (`evidence.flags`), before anything anonymizes it.
    Idempotent: a task already written keeps its first description (a double submit or a
    second tab neither duplicates nor overwrites it).
    """
    task = participant.writing_tasks.select_related("target").filter(position=position).first()
    if task is None:
        raise ValidationError({"position": "There is no such description task."})
    if task.description_id is not None:
        return task.description
    study = participant.study
    cleaned = description_validate(study=study, text=text)
    signals = study.telemetry_signals or []
    report = telemetry_parse(telemetry, signals=signals, answer_fields=("text",))
    checked_telemetry = report.values
    description = Description(
        study=study,
        target=task.target,
        writer=participant,
        text=cleaned,
        telemetry=checked_telemetry,
        flags=description_flags(
            text=cleaned,
            telemetry=checked_telemetry,
            # A writer's page is not bound to a served view (docs/participants.md).
            problems=report.problems,
            signals=signals,
            rules=study_rules(study),
        ),
    )
    description.full_clean(validate_constraints=False)
    try:
        with transaction.atomic():
            description.save()
            claimed = WritingTask.objects.filter(pk=task.pk, description__isnull=True).update(
                description=description
            )
            if not claimed:
                raise IntegrityError("writing task already has a description")
    except IntegrityError:
        task.refresh_from_db()
        if task.description_id is None:
            raise
        return task.description
    return description

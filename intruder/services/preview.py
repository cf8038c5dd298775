"""A researcher's preview of a study's participant pages, which records nothing.

The preview walks the real participant templates (consent, instructions, texts or writing
tasks, debrief) with the study's own texts, and checks answers with the participants' own
validation, but it never enrols a participant, claims a slot or stores an answer: nothing
it does reaches the study's tables, exports or analyses. What it must remember between pages
(which texts it drew, a rejected answer to show after the redirect) is a plain dict that the
view keeps in the researcher's browser.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from intruder.models import AnonymizedText, Study, TargetPerson
from intruder.selectors.participant import intruder_text_pool, study_groups, writer_target_pool
from intruder.services.form_state import RejectedAnswer
from intruder.services.judgments import CHOICE_REQUIRED, judgment_validate
from intruder.services.writing import description_validate

# The preview keeps a rejected answer in a cookie: a long text is shown cut at this length.
MAX_KEPT_PREVIEW_CHARS = 3000
RELEASE_FIRST = "release texts first"
IMPORT_TARGETS_FIRST = "import targets first"


@dataclass(frozen=True)
class PreviewPlan:
    """What a preview shows: the texts (intruder study) or targets (collection study)."""

    texts: list[AnonymizedText] = field(default_factory=list)
    targets: list[TargetPerson] = field(default_factory=list)
    missing: str = ""  # why there is nothing to preview yet ("" when there is)

    @property
    def items(self) -> int:
        """Return how many item pages the preview has."""
        return len(self.texts) or len(self.targets)


def preview_state_new() -> dict:
    """Return a fresh preview state (a new draw of texts or targets)."""
    return {"seed": secrets.randbelow(2**31), "rejected": {}}


def preview_plan(*, study: Study, state: dict) -> PreviewPlan:
    """Return the preview's texts or targets, drawn with the state's seed (stable per visit).

    An intruder preview shows up to `items_per_participant` released texts of the study's
    groups; with none released it says to release texts first. A collection preview shows
    one target per shown group, as a writer gets.
    """
    rng = random.Random(state.get("seed", 0))
    if study.kind == Study.Kind.INTRUDER:
        ids = sorted(intruder_text_pool(study=study).values_list("id", flat=True))
        if not ids:
            return PreviewPlan(missing=RELEASE_FIRST)
        chosen = rng.sample(ids, min(len(ids), study.items_per_participant))
        texts = AnonymizedText.objects.in_bulk(chosen)
        return PreviewPlan(texts=[texts[pk] for pk in chosen])
    targets = []
    for group in study_groups(study=study):
        pool = list(writer_target_pool(study=study, group=group))
        if pool:
            targets.append(rng.choice(pool))
    if not targets:
        return PreviewPlan(missing=IMPORT_TARGETS_FIRST)
    return PreviewPlan(targets=targets)


def preview_answer_check(
    *, study: Study, state: dict, task: str, values: dict[str, str]
) -> dict[str, list[str]]:
    """Check an answer as the participant pages would; keep it in `state` if rejected.

    Returns the errors ({} when the answer would be accepted). Nothing is stored anywhere
    else: an accepted answer is dropped.
    """
    try:
        if task.startswith("write:"):
            description_validate(study=study, text=values.get("text", ""))
        else:
            choice = values.get("self_identified", "")
            if choice not in ("yes", "no"):
                raise ValidationError({"self_identified": CHOICE_REQUIRED})
            judgment_validate(
                self_identified=choice == "yes",
                guessed_name=values.get("guessed_name", ""),
                revealing_text=values.get("revealing_text", ""),
                other_knowledge=values.get("other_knowledge", ""),
            )
    except ValidationError as error:
        kept = {name: value[:MAX_KEPT_PREVIEW_CHARS] for name, value in values.items()}
        state["rejected"] = {"task": task, "values": kept, "errors": error.message_dict}
        return error.message_dict
    state["rejected"] = {}
    return {}


def preview_rejected(*, state: dict, task: str) -> RejectedAnswer | None:
    """Return the rejected answer the preview keeps for `task`, if any."""
    rejected = state.get("rejected") or {}
    if rejected.get("task") != task:
        return None
    return RejectedAnswer(values=rejected.get("values", {}), errors=rejected.get("errors", {}))

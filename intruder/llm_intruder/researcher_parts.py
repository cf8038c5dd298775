"""The LLM jobs' part of the study page (`intruder.views.researcher.parts`): in its
anonymization card, the forms that start them and the open-world LLM intruder's latest rates,
from this package's own template."""

from __future__ import annotations

from django.http import HttpRequest
from django.template.loader import render_to_string

from intruder.llm_intruder.selectors import llm_prompt_choices, open_world_llm_results
from intruder.models import Study
from intruder.views.researcher.parts import ResearcherParts, register


def anonymization(request: HttpRequest, study: Study, can_edit: bool) -> str:
    """Return the LLM forms (editors) and results of an intruder test ("" for a collection)."""
    if study.kind != Study.Kind.INTRUDER:
        return ""
    context = {
        "study": study,
        "can_edit": can_edit,
        "llm_prompts": llm_prompt_choices(),
        "llm_open_world": open_world_llm_results(study),
    }
    return render_to_string("llm_intruder/_anonymization.html", context, request=request)


def register_researcher_parts() -> None:
    register("llm_intruder", ResearcherParts(anonymization=anonymization))

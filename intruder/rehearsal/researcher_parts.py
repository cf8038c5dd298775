"""The dress rehearsal's part of the study page (`intruder.views.researcher.parts`): its card,
with the form that starts one and the latest one's verdict, from this package's own template."""

from __future__ import annotations

from django.http import HttpRequest
from django.template.loader import render_to_string

from intruder.models import Study
from intruder.rehearsal.selectors import latest_rehearsal
from intruder.views.researcher.parts import ResearcherParts, register


def study_panel(request: HttpRequest, study: Study, can_edit: bool) -> str:
    """Return the rehearsal card of an intruder test ("" for a collection study)."""
    if study.kind != Study.Kind.INTRUDER:
        return ""
    context = {"study": study, "can_edit": can_edit, "rehearsal": latest_rehearsal(study)}
    return render_to_string("rehearsal/_panel.html", context, request=request)


def register_researcher_parts() -> None:
    register("rehearsal", ResearcherParts(study_panel=study_panel))

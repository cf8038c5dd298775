"""Preview a study as a participant would see it, recording nothing.

The preview is stateless and read-only: every page is a GET whose query string says which
step to show and which texts (or targets) were drawn, answers are never sent anywhere (the
preview's inputs have no names and its buttons are links), and no participant, assignment,
judgment, description or session row is written. `tests/intruder/test_researcher_preview.py`
checks that walking a whole preview runs no INSERT, UPDATE or DELETE.
"""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from intruder.models import AnonymizedText, PersonGroup, Study, TargetPerson
from intruder.selectors.participant import (
    intruder_text_view,
    study_groups,
    writer_target_pool,
)
from intruder.selectors.researcher import servable_texts, study_role


def _draw(study: Study) -> list[int]:
    """Return the ids a participant could be shown: released texts or one target per group."""
    if study.kind == Study.Kind.INTRUDER:
        ids = list(servable_texts(study).values_list("pk", flat=True))
        return random.sample(ids, min(len(ids), study.items_per_participant))
    drawn = []
    for group in study_groups(study=study):
        pool = list(writer_target_pool(study=study, group=group).values_list("pk", flat=True))
        if pool:
            drawn.append(random.choice(pool))
    return drawn


def _steps(study: Study, count: int) -> list[str]:
    middle = [f"item-{n}" for n in range(1, count + 1)]
    before = ["consent", "instructions"] if study.kind == Study.Kind.INTRUDER else ["consent"]
    return [*before, *middle, "debrief"]


def _segments(text: AnonymizedText) -> list[tuple[bool, str]]:
    """Split a text into (is_placeholder, chunk) pieces as the participant page does."""
    view = intruder_text_view(text=text)
    chunks: list[tuple[bool, str]] = []
    rest = view.text
    while rest:
        hits = [(rest.find(p), p) for p in view.placeholders if p in rest]
        if not hits:
            chunks.append((False, rest))
            break
        at, placeholder = min(hits, key=lambda hit: (hit[0], -len(hit[1])))
        if at:
            chunks.append((False, rest[:at]))
        chunks.append((True, placeholder))
        rest = rest[at + len(placeholder) :]
    return chunks


@login_required
@require_GET
def study_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """Show one page of the participant flow; nothing is stored."""
    study = get_object_or_404(Study, slug=slug)
    if study_role(request.user, study) is None:
        raise Http404("no such study")
    try:
        ids = [int(i) for i in request.GET.get("items", "").split(",") if i]
    except ValueError:
        ids = []
    if "items" not in request.GET:
        ids = _draw(study)
    context: dict[str, Any] = {"study": study, "preview": True}
    if not ids:
        context["missing"] = (
            "release texts first"
            if study.kind == Study.Kind.INTRUDER
            else "import or create target persons first"
        )
        return render(request, "researcher/preview.html", context)
    steps = _steps(study, len(ids))
    step = request.GET.get("step", steps[0])
    if step not in steps:
        step = steps[0]
    index = steps.index(step)
    base = reverse("researcher-preview", kwargs={"slug": study.slug})
    items = ",".join(map(str, ids))

    def link(target: str) -> str:
        return f"{base}?{urlencode({'step': target, 'items': items})}"

    context.update(
        step=step.split("-")[0],
        next_url=link(steps[index + 1]) if index + 1 < len(steps) else "",
        back_url=link(steps[index - 1]) if index else "",
        restart_url=base,
        total=len(ids),
    )
    if step.startswith("item-"):
        number = int(step.split("-")[1])
        context.update(number=number, progress_pct=int(100 * (number - 1) / len(ids)))
        if study.kind == Study.Kind.INTRUDER:
            text = get_object_or_404(servable_texts(study), pk=ids[number - 1])
            context["segments"] = _segments(text)
        else:
            target = get_object_or_404(TargetPerson, study=study, pk=ids[number - 1])
            context.update(
                target=target,
                profile=target.profile or {},
                is_semifamous=target.group == PersonGroup.SEMIFAMOUS,
                is_fictitious=target.group == PersonGroup.FICTITIOUS,
            )
    return render(request, "researcher/preview.html", context)

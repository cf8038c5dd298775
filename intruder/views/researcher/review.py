"""Review pages: the span editor beside the original, leak findings, reviewed marks, search
and filters, and releases (one text, or in bulk after a confirmation page).

Access as on the other researcher pages (`intruder.web.access.study_for`): viewers
read, owners and editors change. Every edit carries the text's revision (optimistic
locking), so an edit made on a stale page is refused and nothing is overwritten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from anonymize import placeholders
from intruder.exceptions import errors_as_messages
from intruder.models import AnonymizedText
from intruder.selectors.access import role_can_edit
from intruder.selectors.leak_checks import (
    BLOCKING_KINDS,
    LeakFinding,
    blocking_leaks,
    text_leak_findings,
)
from intruder.selectors.review import FLAGGED, POSSIBLE, REVIEWED, UNREVIEWED, review_texts
from intruder.services import anonymization, review
from intruder.views.researcher.parts import machine_flagged, review_list_parts, text_flags
from intruder.views.researcher.review_actions import ACTIONS, ReviewAction
from intruder.web.access import study_for

REVIEW_PAGE_SIZE = 50
# The writer's placeholders as whole words (`anonymize.placeholders`).
PLACEHOLDER_PATTERN = re.compile(rf"\b(?:{placeholders.PLACEHOLDER_PATTERN.pattern})\b")


REVIEW_FILTERS = (
    ("", "all texts"),
    (UNREVIEWED, "drafts not yet reviewed"),
    (REVIEWED, "marked reviewed"),
    (FLAGGED, "drafts held back for a leak"),
    (POSSIBLE, "drafts with any leak hint"),
    *((value, label.lower()) for value, label in AnonymizedText.Status.choices),
)


def _page_number(value: str, total: int) -> int:
    """Return the review page asked for, within the pages there are (1 for anything odd).

    `str.isdigit` accepts "²" and other digits `int` refuses, and a 5000-digit number would
    overflow the database's OFFSET: only ASCII digits count, and the page is clamped.
    """
    last = max(1, -(-total // REVIEW_PAGE_SIZE))
    if not (value.isascii() and value.isdigit()):
        return 1
    return last if len(value) > 9 else min(max(1, int(value)), last)


@login_required
@require_GET
def review_list(request: HttpRequest, slug: str) -> HttpResponse:
    """List the study's anonymized texts, searchable and filtered, with their leak warnings."""
    study, role = study_for(request, slug)
    status = request.GET.get("status", "")
    query = request.GET.get("q", "")[:200]
    texts = review_texts(study, status, query)
    total = len(texts)
    page = _page_number(request.GET.get("page", "1"), total)
    page_texts = texts[(page - 1) * REVIEW_PAGE_SIZE : page * REVIEW_PAGE_SIZE]
    can_edit = role_can_edit(role)
    parts = review_list_parts(request, study, can_edit, page_texts)
    rows = [
        {
            "text": t,
            "findings": text_leak_findings(t),
            "flag": parts.flags.get(t.pk, ""),
            "cells": parts.cells.get(t.pk, ""),
        }
        for t in page_texts
    ]
    for row in rows:
        row["blocking"] = [f for f in row["findings"] if f.kind in BLOCKING_KINDS]
    flagged = len(review_texts(study, FLAGGED))
    methods = sorted(
        set(
            AnonymizedText.objects.filter(description__study=study).values_list("method", flat=True)
        )
    )
    return render(
        request,
        "researcher/review_list.html",
        {
            "study": study,
            "can_edit": can_edit,
            "review_parts": parts,
            "rows": rows,
            "status": status,
            "query": query,
            "filters": REVIEW_FILTERS,
            "methods": methods,
            "page": page,
            "has_next": page * REVIEW_PAGE_SIZE < total,
            "total": total,
            "flagged_drafts": flagged,
            "unreviewed": len(review_texts(study, UNREVIEWED)),
        },
    )


def highlight_original(original: str, spans: list[dict[str, Any]]) -> SafeString:
    """Return the original text, escaped, each span a focusable mark that opens its editor."""
    cursor = 0
    pieces = []
    for index, span in sorted(enumerate(spans), key=lambda pair: pair[1]["start"]):
        start, end = span["start"], span["end"]
        if start < cursor:
            continue
        pieces.append(format_html("{}", original[cursor:start]))
        pieces.append(
            format_html(
                '<a class="span" href="#span-{}" data-index="{}" data-start="{}" data-end="{}" '
                'data-category="{}" title="{}: click to change or unmask">{}<sup>{}</sup></a>',
                index,
                index,
                start,
                end,
                span["category"],
                span["category"],
                original[start:end],
                span.get("placeholder") or span["category"],
            )
        )
        cursor = end
    pieces.append(format_html("{}", original[cursor:]))
    return format_html_join("", "{}", ((p,) for p in pieces))


def _placeholders_marked(text: str) -> list[SafeString]:
    pieces = []
    cursor = 0
    for match in PLACEHOLDER_PATTERN.finditer(text):
        pieces.append(format_html("{}", text[cursor : match.start()]))
        pieces.append(format_html('<span class="placeholder">{}</span>', match.group()))
        cursor = match.end()
    pieces.append(format_html("{}", text[cursor:]))
    return pieces


def highlight_anonymized(text: str, findings: Sequence[LeakFinding] = ()) -> SafeString:
    """Return the anonymized text, escaped, placeholders marked and leak findings outlined."""
    pieces: list[SafeString] = []
    cursor = 0
    for finding in sorted(findings, key=lambda f: f.start):
        if finding.start < cursor:
            continue
        pieces += _placeholders_marked(text[cursor : finding.start])
        inner = format_html_join(
            "", "{}", ((p,) for p in _placeholders_marked(text[finding.start : finding.end]))
        )
        pieces.append(
            format_html(
                '<mark class="leak leak-{}" title="{}">{}</mark>',
                finding.kind,
                finding.message,
                inner,
            )
        )
        cursor = finding.end
    pieces += _placeholders_marked(text[cursor:])
    return format_html_join("", "{}", ((p,) for p in pieces))


@login_required
@require_http_methods(["GET", "POST"])
def review_text(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Review one anonymized text beside its original; editors fix spans and release it."""
    study, role = study_for(request, slug, edit=request.method == "POST")
    text = get_object_or_404(
        AnonymizedText.objects.select_related("description__target"),
        pk=pk,
        description__study=study,
    )
    if request.method == "POST":
        return _review_action(request, slug=study.slug, pk=text.pk, text=text)
    siblings = list(
        AnonymizedText.objects.filter(description__study=study)
        .order_by("description_id", "method")
        .values_list("pk", flat=True)
    )
    position = siblings.index(text.pk)
    findings = text_leak_findings(text)
    context = {
        "study": study,
        "can_edit": role_can_edit(role),
        "text": text,
        "original": text.description.text,
        "original_html": highlight_original(text.description.text, text.spans),
        "anonymized_html": highlight_anonymized(text.text, findings),
        "text_flag": text_flags(request, text),
        "spans": list(enumerate(text.spans)),
        "findings": findings,
        "blocking": [f for f in findings if f.kind in BLOCKING_KINDS],
        "categories": anonymization.categories(),
        "editable": text.status != AnonymizedText.Status.RELEASED,
        "prev_pk": siblings[position - 1] if position > 0 else None,
        "next_pk": siblings[position + 1] if position + 1 < len(siblings) else None,
        "position": position + 1,
        "count": len(siblings),
        # "Mask more" prefilled from the review list's words that still drive the match.
        "needle": request.GET.get("mask", "")[:200],
    }
    return render(request, "researcher/review_text.html", context)


@errors_as_messages("researcher-review-text", kwargs=("slug", "pk"), prefix="Not saved: ")
def _review_action(request: HttpRequest, slug: str, pk: int, text: AnonymizedText) -> HttpResponse:
    """Apply one review action (a small form of `review_actions`), then back to a text."""
    action = ACTIONS.get(request.POST.get("action", ""))
    if action is None:
        messages.error(request, f"Unknown action {request.POST.get('action', '')!r}.")
        return redirect("researcher-review-text", slug=slug, pk=pk)
    form = action(request.POST)
    if not form.is_valid():
        messages.error(request, f"Not saved: {' '.join(_form_errors(form))}")
        return redirect("researcher-review-text", slug=slug, pk=pk)
    messages.success(request, form.apply(text, request.user))
    following = form.cleaned_data.get("next")  # "Release and go to next"
    return redirect("researcher-review-text", slug=slug, pk=following or pk)


def _form_errors(form: ReviewAction) -> list[str]:
    """Return a form's errors as sentences naming their field (the revision's says reload)."""
    return [
        message if field == "revision" else f"{field}: {message}"
        for field, messages_ in form.errors.items()
        for message in messages_
    ]


@login_required
@require_POST
def release_bulk(request: HttpRequest, slug: str) -> HttpResponse:
    """Release drafts in bulk after a confirmation page that says what will happen."""
    study, _ = study_for(request, slug, edit=True)
    texts = AnonymizedText.objects.filter(description__study=study)
    method = request.POST.get("method", "")
    if method:
        texts = texts.filter(method=method)
    include_flagged = bool(request.POST.get("include_flagged"))
    reviewed_only = request.POST.get("scope", "reviewed") == "reviewed"
    if not request.POST.get("confirmed"):
        release, held, unreviewed = review.release_plan(
            texts=texts, include_flagged=include_flagged, reviewed_only=reviewed_only
        )
        flagged_released = [t for t in release if blocking_leaks(t)]
        # The pre-release risk check's flags: the machine ranks the true person first.
        machine = machine_flagged(study)
        machine_released = [t for t in release if t.pk in machine]
        return render(
            request,
            "researcher/release_confirm.html",
            {
                "study": study,
                "method": method,
                "include_flagged": include_flagged,
                "scope": "reviewed" if reviewed_only else "all",
                "release": release,
                "held": held,
                "unreviewed": unreviewed,
                "flagged_released": flagged_released,
                "unreviewed_released": sum(t.reviewed_at is None for t in release),
                "machine_released": len(machine_released),
                "machine_unreviewed": sum(t.reviewed_at is None for t in machine_released),
            },
        )
    released, held_back = review.anonymized_texts_release(
        texts=texts, user=request.user, include_flagged=include_flagged, reviewed_only=reviewed_only
    )
    messages.success(request, f"Released {released} text(s).")
    if held_back:
        messages.warning(
            request,
            f"Held back {len(held_back)} draft(s) with leak warnings; review them (filter: "
            "held back for a leak).",
        )
    return redirect("researcher-review", slug=study.slug)

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
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from anonymize import placeholders
from intruder.analysis.leak_checks import (
    BLOCKING_KINDS,
    LeakFinding,
    blocking_leaks,
    text_leak_findings,
)
from intruder.models import AnonymizedText, AttackRun, GuardResult, GuardRun, Job, Study
from intruder.risk.background_uploads import BackgroundUploadError, parse_background_uploads
from intruder.risk.flags import latest_risk_check, risk_flags
from intruder.risk.guarding import (
    GuardRunError,
    guard_candidates,
    guard_run_results,
    guard_run_start,
    latest_guard_run,
)
from intruder.selectors.access import role_can_edit
from intruder.selectors.review import FLAGGED, POSSIBLE, REVIEWED, UNREVIEWED, review_texts
from intruder.services import anonymization, jobs, review
from intruder.views.researcher.forms import GuardForm
from intruder.web.access import study_for
from intruder.web.job_messages import job_start_message

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
    guard_run, guard_job, guarded = latest_guard_results(study)
    rows = [
        {"text": t, "findings": text_leak_findings(t), "guard": guarded.get(t.pk)}
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
            "can_edit": role_can_edit(role),
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
            "guard_run": guard_run,
            "guard_job": guard_job,
            "guard_form": GuardForm(
                candidates=guard_candidates(study, AttackRun.Background.CROSS_VALIDATED)
            ),
        },
    )


def latest_guard_results(
    study: Study,
) -> tuple[GuardRun | None, Job | None, dict[int, GuardResult]]:
    """Return the study's latest guard run, its job and its rows by text id, so far while it
    runs (none for a failed job: the page shows its error, and a retry resumes)."""
    run = latest_guard_run(study)
    if run is None:
        return None, None, {}
    if run.job is not None and run.job.status == Job.Status.FAILED:
        return run, run.job, {}
    return run, run.job, guard_run_results(run)


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
        return _review_action(request, study, text)
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


def _review_action(request: HttpRequest, study: Study, text: AnonymizedText) -> HttpResponse:
    """Apply one review action (unmask, mask a string, edit text, release, withdraw, reopen)."""
    action = request.POST.get("action", "")
    try:
        revision = int(request.POST.get("revision", ""))
    except ValueError:
        messages.error(request, "The form is missing its revision; reload the page.")
        return redirect("researcher-review-text", slug=study.slug, pk=text.pk)
    original = text.description.text
    post = request.POST

    def number(name: str) -> int:
        return int(post.get(name, ""))

    span_edits = {
        "remove_span": lambda: review.spans_without(text.spans, number("index")),
        "remove_same": lambda: review.spans_without_same(text.spans, number("index")),
        "set_category": lambda: review.spans_with_category(
            text.spans, number("index"), post.get("category", "")
        ),
        "set_bounds": lambda: review.spans_with_bounds(
            original, text.spans, number("index"), number("start"), number("end")
        ),
        "add_range": lambda: review.spans_with_range(
            original, text.spans, number("start"), number("end"), post.get("category", "")
        ),
        "add_span": lambda: review.spans_with_string(
            original,
            text.spans,
            post.get("needle", ""),
            post.get("category", ""),
            whole_words=bool(post.get("whole_words")),
        ),
    }
    try:
        if action in span_edits:
            review.anonymized_text_set_spans(
                text=text, spans=span_edits[action](), expected_revision=revision, user=request.user
            )
            messages.success(request, "Saved; text re-rendered.")
        elif action in ("mark_reviewed", "unmark_reviewed"):
            review.anonymized_text_mark_reviewed(
                text=text,
                user=request.user,
                expected_revision=revision,
                reviewed=action == "mark_reviewed",
            )
            messages.success(
                request, "Marked reviewed." if action == "mark_reviewed" else "Review mark removed."
            )
        elif action == "release" and blocking_leaks(text) and not post.get("confirm_leak"):
            messages.error(
                request,
                "Not released: the text has leak warnings. Tick “I have read the warnings” to "
                "release it anyway.",
            )
        elif action == "edit_text":
            review.anonymized_text_set_text(
                text=text,
                new_text=request.POST.get("text", ""),
                expected_revision=revision,
                user=request.user,
            )
            messages.success(request, "Text saved.")
        elif action in ("release", "withdraw", "reopen"):
            status = {
                "release": AnonymizedText.Status.RELEASED,
                "withdraw": AnonymizedText.Status.WITHDRAWN,
                "reopen": AnonymizedText.Status.DRAFT,
            }[action]
            review.anonymized_text_set_status(
                text=text, status=status, user=request.user, expected_revision=revision
            )
            messages.success(request, f"Text is now {status}.")
        else:
            messages.error(request, f"Unknown action {action!r}.")
    except review.StaleRevisionError as exc:
        messages.error(request, f"Not saved: {exc}. Your change was not applied.")
        return redirect("researcher-review-text", slug=study.slug, pk=text.pk)
    except (review.SpanEditError, review.StatusError, ValueError) as exc:
        messages.error(request, f"Not saved: {exc}")
    nxt = request.POST.get("next")
    if action == "release" and nxt and nxt.isdigit():
        return redirect("researcher-review-text", slug=study.slug, pk=int(nxt))
    return redirect("researcher-review-text", slug=study.slug, pk=text.pk)


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
        machine = risk_flags(latest_risk_check(study))
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


@login_required
@require_POST
def study_guard(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a job that masks what lets the machine attacks rank each draft's person."""
    study, _ = study_for(request, slug, edit=True)
    form = GuardForm(
        request.POST,
        request.FILES,
        candidates=guard_candidates(study, AttackRun.Background.CROSS_VALIDATED),
    )
    if not form.is_valid():
        errors = "; ".join(
            f"{form.fields[field].label if field in form.fields else 'form'}: {' '.join(e)}"
            for field, e in form.errors.items()
        )
        messages.error(request, f"Not queued: {errors}")
        return redirect("researcher-review", slug=study.slug)
    data = form.cleaned_data
    params: dict[str, Any] = {
        "k": data["k"],
        "budget": data["budget"],
        "background": data["background"],
        "folds": data["folds"],
    }
    if data["background"] == AttackRun.Background.UPLOADED:
        try:
            files = request.FILES.getlist("documents")
            documents = parse_background_uploads((f.name, f.read()) for f in files)
        except BackgroundUploadError as error:
            messages.error(request, f"Not queued: {error}")
            return redirect("researcher-review", slug=study.slug)
        known = set(study.targets.values_list("key", flat=True))
        documents = {key: text for key, text in documents.items() if key in known}
        if len(documents) < 2:
            messages.error(
                request,
                "Not queued: upload background documents for at least two of the study's "
                "target persons (files named for their keys, or a target column).",
            )
            return redirect("researcher-review", slug=study.slug)
        params["background_documents"] = documents
    try:
        run, created = guard_run_start(study=study, user=request.user, **params)
    except GuardRunError as error:
        messages.error(request, f"Not queued: {error}")
        return redirect("researcher-review", slug=study.slug)
    job_start_message(
        request, job=run.job, created=created, name="Guard", queued="a worker runs it"
    )
    return redirect("researcher-review", slug=study.slug)


@login_required
@require_GET
def study_guard_rows(request: HttpRequest, slug: str) -> JsonResponse:
    """Return the latest guard run's progress and its per-text rows so far (polled live)."""
    study, _ = study_for(request, slug)
    run, guard_job, guarded = latest_guard_results(study)
    if run is None:
        return JsonResponse({"job": None, "rows": {}})
    rows = {
        str(text_id): {
            "ranks": row.ranks,
            "masked_words": row.masked_words,
            "residual_words": row.residual_words,
            "review_url": reverse("researcher-review-text", args=[study.slug, text_id]),
            "flagged": row.flagged,
            "reason": row.reason,
        }
        for text_id, row in guarded.items()
    }
    # A run whose job is gone (never deleted by the app) counts as finished.
    status = guard_job.status if guard_job is not None else Job.Status.SUCCEEDED
    return JsonResponse(
        {
            "job": run.job_id,
            "run": run.pk,
            "status": status,
            # A cancelled job stops too: the page stops polling (its rows so far stay).
            "finished": status not in jobs.ACTIVE_STATUSES,
            "progress_done": guard_job.progress_done if guard_job is not None else len(rows),
            "progress_total": guard_job.progress_total if guard_job is not None else len(rows),
            "message": guard_job.message if guard_job is not None else "",
            "rows": rows,
        }
    )

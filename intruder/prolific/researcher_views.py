"""The study's Prolific page: publish, pause/resume, sync, review and bonus (thin views)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal, InvalidOperation

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from intruder.evidence.selectors import FLAG_LABELS, study_rules
from intruder.exceptions import errors_as_messages
from intruder.models import Study
from intruder.prolific.bonuses import BonusSelection, bonus_select
from intruder.prolific.bulk_review import (
    APPROVE_CLEAN,
    BULK_RULES,
    REJECT_EXCLUDED,
    bulk_candidates,
    bulk_review,
    review_counts,
)
from intruder.prolific.claims import claims_pending
from intruder.prolific.client import (
    ProlificClient,
    ProlificError,
    answer_text,
    client_from_settings,
    prolific_enabled,
)
from intruder.prolific.models import ProlificAction, ProlificStudyState
from intruder.prolific.preview import (
    CURRENCY_MINOR,
    Plan,
    api_base,
    bonus_plan,
    currency,
    draft_plan,
    is_sandbox,
    review_plan,
    transition_plan,
)
from intruder.prolific.services import (
    DEVICES,
    MIN_OVERRIDE_CHARS,
    MIN_REJECTION_CHARS,
    REJECTION_CATEGORIES,
    ProlificActionRefused,
    bonuses_pay,
    draft_build,
    prolific_monitor_state,
    review_check,
    study_draft_create,
    study_sync,
    study_transition,
    submission_rows,
    submissions_review,
    transitions_allowed,
)
from intruder.selectors.access import role_can_edit
from intruder.web.access import study_for


class DraftForm(forms.Form):
    name = forms.CharField(
        max_length=200, label="Name shown to participants on Prolific (not the internal title)"
    )
    description = forms.CharField(
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 70}),
        label="Description shown to participants on Prolific",
    )
    places = forms.IntegerField(min_value=1, max_value=100_000)
    reward_minor = forms.IntegerField(
        min_value=1,
        max_value=1_000_000,
    )
    estimated_minutes = forms.IntegerField(min_value=1, max_value=24 * 60)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        code = currency()
        unit = CURRENCY_MINOR.get(code, "minor units")
        self.fields["reward_minor"].label = (
            f"Reward per participant, in {code} {unit} (the workspace currency's minor unit: "
            f"150 is {code} 1.50)"
        )

    completion_action = forms.ChoiceField(
        choices=ProlificStudyState.CompletionAction.choices,
        initial=ProlificStudyState.CompletionAction.MANUALLY_REVIEW,
    )
    devices = forms.MultipleChoiceField(
        choices=[(d, d) for d in DEVICES],
        initial=["desktop"],
        widget=forms.CheckboxSelectMultiple,
        label="Devices allowed",
    )


# A bonus per identified text above this is a typo (e.g. pence typed as pounds).
MAX_BONUS_PER_TEXT = Decimal("100")


def _entry_url(request: HttpRequest, study: Study) -> str:
    return request.build_absolute_uri(reverse("participant-entry", kwargs={"slug": study.slug}))


@login_required
@require_GET
def prolific_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Show Prolific's status, the draft form or the controls, and the submissions."""
    study, role = study_for(request, slug)
    state = prolific_monitor_state(study)  # counts of what webhooks and syncs reported
    context = {
        "study": study,
        "can_edit": role_can_edit(role),
        "enabled": prolific_enabled(),
        "state": state,
        "draft_form": DraftForm(
            initial={"places": 20, "estimated_minutes": 15, "name": study.public_title}
        ),
        "allowed": transitions_allowed(state.status if state else ""),
        "api_base": api_base(),
        "sandbox": is_sandbox(),
        "currency": currency(),
        "rows": submission_rows(study),
        "categories": REJECTION_CATEGORIES,
        "min_reason": MIN_REJECTION_CHARS,
        "min_override": MIN_OVERRIDE_CHARS,
        "actions": [
            (action, answer_text(action.response))
            for action in ProlificAction.objects.filter(study=study).select_related("created_by")[
                :200
            ]
        ],
        **_rules_context(study),
        "review_counts": review_counts(study),
        "pending_claims": claims_pending(study),
    }
    return render(request, "prolific/study.html", context)


def _rules_context(study: Study) -> dict:
    rules = study_rules(study)
    return {
        "excluding_labels": [FLAG_LABELS[c] for c in rules["exclude"] if c in FLAG_LABELS],
        "rules_set_at": study.exclusion_rules_set_at,
    }


@login_required
@require_http_methods(["GET", "POST"])
def prolific_bulk(request: HttpRequest, slug: str, rule: str) -> HttpResponse:
    """Preview who a bulk rule selects (GET); send it for the ticked participants (POST)."""
    if rule not in BULK_RULES:
        raise Http404("no such rule")
    if request.method == "POST":
        return _bulk_send(request, slug, rule)
    study, role = study_for(request, slug)
    return _bulk_page(request, study, role, rule)


def _bulk_page(
    request: HttpRequest, study: Study, role, rule: str, posted: dict | None = None
) -> HttpResponse:
    candidates = bulk_candidates(study, rule)
    if posted is not None:  # a refused send: show what was typed, nothing lost
        candidates = [
            replace(
                c,
                reason=posted["reasons"].get(c.prolific_pid, c.reason),
                category=posted["categories"].get(c.prolific_pid, c.category),
            )
            for c in candidates
        ]
    context = {
        "study": study,
        "can_send": role_can_edit(role) and prolific_enabled() and bool(study.prolific_study_id),
        "rule": rule,
        "rule_text": BULK_RULES[rule],
        "rejecting": rule == REJECT_EXCLUDED,
        "candidates": candidates,
        "ticked": set(posted["pids"]) if posted else {c.prolific_pid for c in candidates},
        "categories": REJECTION_CATEGORIES,
        "min_reason": MIN_REJECTION_CHARS,
        "api_base": api_base(),
        "sandbox": is_sandbox(),
        "currency": currency(),
        **_rules_context(study),
    }
    return render(request, "prolific/bulk.html", context)


def _bulk_send(request: HttpRequest, slug: str, rule: str) -> HttpResponse:
    study, role = study_for(request, slug, edit=True)
    pids = request.POST.getlist("pid")
    rejecting = rule == REJECT_EXCLUDED
    posted = {
        "pids": pids,
        "reasons": {p: request.POST.get(f"reason-{p}", "") for p in pids} if rejecting else {},
        "categories": {p: request.POST.get(f"category-{p}", "OTHER") for p in pids}
        if rejecting
        else {},
    }
    if not prolific_enabled():
        messages.error(request, "No Prolific API token is set on the server.")
        return redirect("researcher-prolific", slug=study.slug)
    if not pids:
        messages.error(request, "Nobody was ticked: nothing sent.")
        return _bulk_page(request, study, role, rule, posted)
    client = client_from_settings()
    try:
        outcome = bulk_review(
            study=study,
            client=client,
            rule=rule,
            pids=pids,
            user=request.user,
            reasons=posted["reasons"],
            categories=posted["categories"],
        )
    except (ProlificActionRefused, ProlificError) as error:
        messages.error(request, f"Nothing sent: {error}")
        return _bulk_page(request, study, role, rule, posted)
    finally:
        client.close()
    verb = "approved" if rule == APPROVE_CLEAN else "rejected"
    note = (
        f"{outcome.succeeded} of {len(outcome.actions)} {verb} "
        "(failed ones stay selected by the rule and can be sent again)."
    )
    if outcome.skipped:
        note += f" Skipped, no longer selected by the rule: {', '.join(outcome.skipped)}."
    failed = len(outcome.actions) - outcome.succeeded
    (messages.warning if failed else messages.success)(request, note)
    return redirect("researcher-prolific", slug=study.slug)


@errors_as_messages("researcher-prolific")
def _act(
    request: HttpRequest,
    *,
    slug: str,
    run: Callable[[Study, ProlificClient], str],
    plan: Callable[[Study], Plan],
) -> HttpResponse:
    """Show what `run` will send (`plan`); send it once the researcher confirms that plan.

    The confirmation carries the plan's digest: when the plan made now differs (the
    participants or amounts changed since the preview), the new plan is shown instead.
    """
    study, _ = study_for(request, slug, edit=True)
    if not prolific_enabled():
        messages.error(request, "No Prolific API token is set on the server.")
        return redirect("researcher-prolific", slug=study.slug)
    planned = plan(study)
    confirm = request.POST.get("confirm", "")
    if confirm != planned.digest:
        return _confirm_page(request, study, planned, changed=bool(confirm))
    client = client_from_settings()
    try:
        note = run(study, client)
    finally:
        client.close()
    if note:
        messages.success(request, note)
    return redirect("researcher-prolific", slug=study.slug)


def _confirm_page(request: HttpRequest, study: Study, plan: Plan, *, changed: bool):
    """The preview: the requests, the facts in words, and the button that sends them."""
    fields = [
        (key, value)
        for key in request.POST
        if key not in ("csrfmiddlewaretoken", "confirm")
        for value in request.POST.getlist(key)
    ]
    context = {
        "study": study,
        "plan": plan,
        "fields": fields,
        "changed": changed,
        "currency": currency(),
        "api_base": plan.base,
        "sandbox": plan.sandbox,
    }
    return render(request, "prolific/confirm.html", context)


def _draft_fields(request: HttpRequest, study: Study) -> dict:
    form = DraftForm(request.POST)
    if not form.is_valid():
        raise ProlificActionRefused(
            "Check the draft: " + "; ".join(f"{k}: {v[0]}" for k, v in form.errors.items())
        )
    data = dict(form.cleaned_data)
    data["devices"] = tuple(data["devices"])
    return {"study": study, "entry_url": _entry_url(request, study), **data}


@login_required
@require_POST
def prolific_draft(request: HttpRequest, slug: str) -> HttpResponse:
    def plan(study):
        if study.prolific_study_id:
            raise ProlificActionRefused(
                f"This study already has a Prolific study ID ({study.prolific_study_id})."
            )
        return draft_plan(draft_build(**_draft_fields(request, study)))

    def run(study, client):
        created = study_draft_create(
            client=client, user=request.user, **_draft_fields(request, study)
        )
        return f"Prolific draft {created['id']} created; its ID is now the study's."

    return _act(request, slug=slug, run=run, plan=plan)


@login_required
@require_POST
def prolific_transition(request: HttpRequest, slug: str) -> HttpResponse:
    action = request.POST.get("action", "")

    def plan(study):
        state = prolific_monitor_state(study)
        status = state.status if state else ""
        if not study.prolific_study_id:
            raise ProlificActionRefused("Create the Prolific draft first.")
        if action not in transitions_allowed(status):
            raise ProlificActionRefused(
                f"Prolific does not allow “{action}” from status {status or 'unknown'}. "
                "Sync first if the status shown is out of date."
            )
        return transition_plan(study, action, state)

    def run(study, client):
        answer = study_transition(study=study, client=client, action=action)
        return f"Prolific status: {answer.get('status', '?')}."

    return _act(request, slug=slug, run=run, plan=plan)


@login_required
@require_POST
@errors_as_messages("researcher-prolific")
def prolific_sync(request: HttpRequest, slug: str) -> HttpResponse:
    """Read Prolific's status and submissions (sends nothing that changes anything)."""
    study, _ = study_for(request, slug, edit=True)
    if not prolific_enabled():
        messages.error(request, "No Prolific API token is set on the server.")
        return redirect("researcher-prolific", slug=study.slug)
    client = client_from_settings()
    try:
        messages.success(request, _synced(study_sync(study=study, client=client)))
    finally:
        client.close()
    return redirect("researcher-prolific", slug=study.slug)


def _synced(state) -> str:
    return f"Synced: {state.status}, {sum(state.counts.values())} submissions."


@login_required
@require_POST
def prolific_review(request: HttpRequest, slug: str) -> HttpResponse:
    pids = request.POST.getlist("pid")
    kind = request.POST.get("kind", "")
    asked = {
        "pids": pids,
        "kind": kind,
        "reason": request.POST.get("reason", ""),
        "category": request.POST.get("category", "OTHER"),
        "override": request.POST.get("override", ""),
    }

    def plan(study):
        review_check(study=study, **asked)
        return review_plan(study, **asked)

    def run(study, client):
        done = submissions_review(study=study, client=client, user=request.user, **asked)
        ok = sum(a.status == ProlificAction.Status.SUCCEEDED for a in done)
        return f"{kind}: {ok} of {len(done)} succeeded (failed ones can be sent again)."

    return _act(request, slug=slug, run=run, plan=plan)


@login_required
@require_POST
def prolific_bonus(request: HttpRequest, slug: str) -> HttpResponse:
    label = " ".join((request.POST.get("label") or "identification").split())[:50]

    def per_text() -> Decimal:
        try:
            per = Decimal(request.POST.get("per_identified", ""))
        except InvalidOperation:
            raise ProlificActionRefused("The bonus per identified text must be a number.") from None
        if not per.is_finite() or per <= 0 or per > MAX_BONUS_PER_TEXT:
            raise ProlificActionRefused(
                f"The bonus per identified text must be above 0 and at most {MAX_BONUS_PER_TEXT}."
            )
        return per

    def selection_for(study) -> BonusSelection:
        try:
            chosen = bonus_select(
                study=study,
                per_identified=per_text(),
                label=label,
                include=request.POST.getlist("include"),
                include_reason=request.POST.get("include_reason", ""),
            )
        except ValueError as error:
            raise ProlificActionRefused(str(error)) from None
        if not chosen.candidates:
            raise ProlificActionRefused("Nobody identified a text: no bonus.")
        return chosen

    def plan(study) -> Plan:
        return bonus_plan(study, selection_for(study), label, per_text())

    def run(study, client):
        chosen = selection_for(study)
        if not chosen.amounts:
            raise ProlificActionRefused("Nobody is to be paid: nothing sent.")
        done = bonuses_pay(
            study=study,
            client=client,
            amounts=chosen.amounts,
            label=label,
            user=request.user,
            judgments=chosen.judgments,
            overrides=chosen.overrides,
        )
        ok = sum(a.status == ProlificAction.Status.SUCCEEDED for a in done)
        failed = [a for a in done if a.status == ProlificAction.Status.FAILED]
        note = f"Bonus “{label}”: {ok} of {len(done)} paid (each is paid once)."
        if failed:
            note += f" Prolific refused: {answer_text(failed[0].response)}"
        return note

    return _act(request, slug=slug, run=run, plan=plan)

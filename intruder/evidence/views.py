"""Flagged answers: the study's exclusion rules (set before launch) and the review list
where a researcher confirms or overrules each flagged answer, with a reason that is kept."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from intruder.evidence.catch_trials import catch_trial_add
from intruder.evidence.flags import (
    FlagDecision,
    exclusion_rules_locked,
    exclusion_rules_set,
    flag_review_record,
)
from intruder.evidence.selectors import (
    DEFAULT_RULES,
    FLAG_LABELS,
    RULE_BOUNDS,
    answer_flag_status,
    flagged_descriptions,
    flagged_judgments,
    participant_flag_counts,
    study_rules,
)
from intruder.exceptions import errors_as_messages
from intruder.models import Description, Judgment
from intruder.selectors.access import role_can_edit
from intruder.selectors.participant import catch_trials_served
from intruder.web.access import study_for

MAX_ROWS = 500


def _rule_field(rule: str, label: str) -> forms.Field:
    """Return the form field of one flag threshold, bounded by `RULE_BOUNDS`; a whole number
    where the default is one."""
    low, high = RULE_BOUNDS[rule]
    if isinstance(DEFAULT_RULES[rule], int):
        return forms.IntegerField(label=label, min_value=int(low), max_value=int(high))
    return forms.FloatField(label=label, min_value=low, max_value=high)


class ExclusionRulesForm(forms.Form):
    """The exclusion rules: which flags exclude an answer, and the flags' thresholds."""

    exclude = forms.MultipleChoiceField(
        choices=list(FLAG_LABELS.items()), required=False, widget=forms.CheckboxSelectMultiple
    )
    min_judgment_ms = _rule_field("min_judgment_ms", "Too fast: a judgment made in less than (ms)")
    max_away_seconds = _rule_field(
        "max_away_seconds", "Long time away: more than (seconds, per text)"
    )
    min_keystroke_ratio = _rule_field(
        "min_keystroke_ratio",
        "Few keystrokes: fewer keystrokes than this share of the answer's characters",
    )
    min_chars_for_keystrokes = _rule_field(
        "min_chars_for_keystrokes", "... for answers of at least (characters)"
    )
    max_writer_chars_per_minute = _rule_field(
        "max_writer_chars_per_minute", "Writers too fast: more than (characters per minute)"
    )
    max_reading_wpm = _rule_field(
        "max_reading_wpm", "Too fast to read: faster than (words a minute, the text's length)"
    )
    min_ms_per_typed_char = _rule_field(
        "min_ms_per_typed_char", "Implausible typing: key by key faster than (ms per character)"
    )
    max_chars_per_input = _rule_field(
        "max_chars_per_input", "... or more than (characters added by one input event)"
    )
    max_chars_per_event = _rule_field(
        "max_chars_per_event", "... or more than (typed characters per input event, on average)"
    )
    repeat_count = _rule_field(
        "repeat_count", "Repeated quick answer: the same answer to at least (texts)"
    )
    quick_answer_seconds = _rule_field(
        "quick_answer_seconds", "... each given within (seconds of the text's first serving)"
    )
    catch_named_min = _rule_field(
        "catch_named_min", "Catch trials: someone named for at least (made-up persons)"
    )


class CatchTrialForm(forms.Form):
    text = forms.CharField(
        label="Description of a made-up person nobody can know", widget=forms.Textarea
    )


class ReviewForm(forms.Form):
    decision = forms.ChoiceField(choices=[("confirm", "Confirm"), ("overrule", "Overrule")])
    reason = forms.CharField(max_length=2000)


@login_required
@require_GET
def flags_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Show the exclusion rules and the flagged answers with their review."""
    study, role = study_for(request, slug)
    rules = study_rules(study)
    judgments = list(flagged_judgments(study)[:MAX_ROWS])
    descriptions = list(flagged_descriptions(study)[:MAX_ROWS])
    counts = participant_flag_counts(study)
    context = {
        "study": study,
        "can_edit": role_can_edit(role),
        "rules": rules,
        "rules_form": ExclusionRulesForm(initial=rules),
        "catch_form": CatchTrialForm(),
        "catch_texts": study.targets.filter(catch=True).count(),
        "catch_served": catch_trials_served(study=study),
        "locked": exclusion_rules_locked(study),
        "flag_labels": FLAG_LABELS,
        "excluded_labels": [FLAG_LABELS[c] for c in rules["exclude"] if c in FLAG_LABELS],
        "judgments": [(j, answer_flag_status(j, rules)) for j in judgments],
        "descriptions": [(d, answer_flag_status(d, rules)) for d in descriptions],
        "participants": sorted(
            ((pid, sum(c.values()), c) for pid, c in counts.items()), key=lambda r: -r[1]
        ),
    }
    return render(request, "evidence/flags.html", context)


@login_required
@require_POST
@errors_as_messages("researcher-flags")
def exclusion_rules_save(request: HttpRequest, slug: str) -> HttpResponse:
    """Record the exclusion rules (refused once participants have started)."""
    study, _ = study_for(request, slug, edit=True)
    form = ExclusionRulesForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Rules not saved: {form.errors.as_text()}")
        return redirect("researcher-flags", slug=study.slug)
    data = form.cleaned_data
    exclusion_rules_set(
        study=study,
        exclude=data["exclude"],
        thresholds={name: data[name] for name in DEFAULT_RULES if name != "exclude"},
    )
    messages.success(request, "Exclusion rules recorded.")
    return redirect("researcher-flags", slug=study.slug)


@login_required
@require_POST
@errors_as_messages("researcher-flags")
def catch_trial_save(request: HttpRequest, slug: str) -> HttpResponse:
    """Add a catch trial: the researcher's text about a made-up person, served as written."""
    study, _ = study_for(request, slug, edit=True)
    form = CatchTrialForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Please write the made-up person's description.")
        return redirect("researcher-flags", slug=study.slug)
    catch_trial_add(study=study, text=form.cleaned_data["text"])
    messages.success(request, "Catch trial added: it is served like the other texts.")
    return redirect(f"{reverse('researcher-flags', args=[study.slug])}#catch")


@login_required
@require_POST
@errors_as_messages("researcher-flags", fragment="{kind}-{pk}")
def flag_review(request: HttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    """Confirm (exclude) or overrule (keep) one flagged answer, with the reason."""
    study, _ = study_for(request, slug, edit=True)
    if kind == "judgment":
        answer = Judgment.objects.filter(pk=pk, participant__study=study).first()
    elif kind == "description":
        answer = Description.objects.filter(pk=pk, study=study).first()
    else:
        answer = None
    if answer is None:
        raise Http404("no such answer")
    form = ReviewForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Please choose confirm or overrule and say why.")
        return redirect("researcher-flags", slug=study.slug)
    confirmed = form.cleaned_data["decision"] == "confirm"
    flag_review_record(
        answer=answer,
        user=request.user,
        decision=FlagDecision(confirmed=confirmed, reason=form.cleaned_data["reason"]),
    )
    messages.success(request, _review_message(answer, kind, confirmed))
    return redirect(f"{reverse('researcher-flags', args=[study.slug])}#{kind}-{pk}")


def _review_message(answer: Judgment | Description, kind: str, confirmed: bool) -> str:
    """Return what a review did, naming the answer as the page lists it (by Prolific ID)."""
    if kind == "judgment":
        whose = f"the judgment of participant {answer.participant.prolific_pid}"
    else:
        writer = answer.writer.prolific_pid if answer.writer_id else "(imported)"
        whose = f"description {answer.reference} by writer {writer}"
    if confirmed:
        return f"Flag confirmed: {whose} is excluded from the \u201cwithout flagged\u201d rates."
    return f"Flag overruled: {whose} is kept in the \u201cwithout flagged\u201d rates."

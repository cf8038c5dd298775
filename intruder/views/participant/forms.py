"""The forms participants post: a writer's description and an intruder's judgment."""

from __future__ import annotations

from django import forms

from intruder.services.judgments import CHOICE_REQUIRED


class DescriptionForm(forms.Form):
    """Parse a writer's post; the service checks the minimum length."""

    position = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    text = forms.CharField(required=False, strip=False, widget=forms.Textarea)


# The answers an intruder's text page posts (kept, when rejected, to show again).
JUDGMENT_FIELDS = ("self_identified", "guessed_name", "revealing_text", "other_knowledge")


class JudgmentForm(forms.Form):
    """Parse an intruder's post; the service checks which answers the choice requires."""

    assignment_id = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    self_identified = forms.TypedChoiceField(
        choices=[("yes", "Yes"), ("no", "No")],
        coerce=lambda value: value == "yes",
        widget=forms.RadioSelect,
        error_messages={"required": CHOICE_REQUIRED},
    )
    guessed_name = forms.CharField(required=False, max_length=200)
    revealing_text = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    other_knowledge = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    client_ms = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)
    # The posted `telemetry` is read raw, not by the form: whatever it holds, it must never
    # reject the answer (evidence.telemetry turns a bad one into "no telemetry").

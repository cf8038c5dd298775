"""Forms of the researcher pages: study settings in plain words, import, members.

Every bound a study setting has is checked on its form field, so a bad value is reported next
to that field; whatever the model still refuses (its validators and database constraints)
is moved next to the field it concerns, and a constraint's internal name never reaches the
page.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from intruder.models import (
    TELEMETRY_SIGNALS,
    PersonGroup,
    Study,
    StudyMember,
)
from intruder.selectors.access import studies_visible_to
from intruder.services import studies
from intruder.web.model_bounds import bounded_formfield

# Fields that only mean something for one kind of study; the form shows them for that kind.
KIND_FIELDS: dict[str, str] = {
    "min_description_chars": Study.Kind.COLLECTION,
    "items_per_participant": Study.Kind.INTRUDER,
    "judgments_per_text": Study.Kind.INTRUDER,
    "instructions_text": Study.Kind.INTRUDER,
    "time_limit_minutes": Study.Kind.INTRUDER,
    "identification_threshold": Study.Kind.INTRUDER,
    "identification_rule": Study.Kind.INTRUDER,
    "identified_rule": Study.Kind.INTRUDER,
    "intruder_population": Study.Kind.INTRUDER,
    "intruder_recruitment": Study.Kind.INTRUDER,
    "intruder_familiarity": Study.Kind.INTRUDER,
    "ask_familiarity": Study.Kind.INTRUDER,
    "familiarity_decoys": Study.Kind.INTRUDER,
    "source_studies": Study.Kind.INTRUDER,
    "discourage_copy": Study.Kind.INTRUDER,
    "allow_same_target": Study.Kind.INTRUDER,
    "attention_checks": Study.Kind.INTRUDER,
    "catch_trials_per_participant": Study.Kind.INTRUDER,
    "attention_check_prompt": Study.Kind.INTRUDER,
    "attention_check_answer": Study.Kind.INTRUDER,
}

LABELS = {
    "slug": "Short name for links",
    "title": "Internal title",
    "public_title": "Title shown to participants",
    "kind": "Kind of study",
    "items_per_participant": "Texts per intruder",
    "judgments_per_text": "Intruders per text",
    "min_description_chars": "Shortest accepted description (characters)",
    "groups": "Person groups",
    "consent_text": "Consent page",
    "instructions_text": "Instructions for intruders",
    "debrief_text": "Debrief page",
    "completion_code": "Prolific completion code",
    "time_limit_minutes": "Time limit per text (minutes)",
    "identification_threshold": "Name-match threshold (0 to 1)",
    "identification_rule": "A guess names the person when",
    "identified_rule": "A text counts as identified by humans when",
    "intruder_population": "Who the intruders are (population)",
    "intruder_recruitment": "How intruders were recruited and screened",
    "intruder_familiarity": "How familiar intruders may be with the persons",
    "ask_familiarity": "Ask intruders which famous persons they had heard of (measured "
    "familiarity)",
    "familiarity_decoys": "Decoy names for the familiarity question",
    "is_open": "Open for new participants",
    "source_studies": "Take descriptions from these collection studies",
    "telemetry_signals": "Answer telemetry recorded",
    "discourage_copy": "Remind intruders who copy a text to answer on their own",
    "allow_same_target": "Allow several texts about one person per intruder",
    "attention_checks": "Attention checks per intruder",
    "catch_trials_per_participant": "Catch trials per intruder",
    "attention_check_prompt": "Attention check instruction",
    "attention_check_answer": "Answer the instruction asks for",
}
HELP = {
    "slug": "Letters, digits and hyphens. It is part of the participant link (/s/SHORT-NAME/) "
    "and cannot be changed later.",
    "title": "Seen by researchers only.",
    "public_title": "What participants see in the page header. Leave empty to show the "
    "internal title; a neutral title avoids priming participants.",
    "items_per_participant": "How many anonymized texts each intruder judges (fewer when "
    "the pool runs short).",
    "judgments_per_text": "How many different intruders judge each released text; the study "
    "is full when every text has this many.",
    "min_description_chars": "Writers cannot submit a description shorter than this.",
    "groups": "Writers describe, and intruders see texts about, persons of the ticked "
    "groups. None ticked: all three.",
    "consent_text": "Shown before anything else; declining ends the study without a code.",
    "instructions_text": "Shown once before the first text.",
    "debrief_text": "Shown at the end, before the completion link.",
    "completion_code": "The code Prolific expects; participants who finish are sent to "
    "Prolific with it.",
    "time_limit_minutes": "A text left unanswered this long is given to someone else.",
    "identification_threshold": "A guess names the person when its character cosine "
    "similarity to the true name (or an alias) reaches this value. The Textwash paper used "
    "0.75.",
    "identification_rule": "Best match and surname (the default): the guess must be closer to "
    "the true person (name or alias) than to any other person of the study, reach the "
    "threshold, and hold the person's surname (a typo allowed): \u201cDaniel Radcliffe\u201d "
    "(0.845 for Daniel Craig) names Radcliffe, not Craig, and \u201cKate Winslet\u201d (0.770 "
    "for Kate Middleton) names nobody of the study. Best match alone lets such outside names "
    "count; the paper's rule counts any guess that reaches the threshold: keep it to replicate "
    "Textwash. Changing it (or the threshold) scores the stored guesses again; the reports "
    "show every rule.",
    "identified_rule": "One rule for every table, plot, statistic and export of the risk "
    "report; the report also shows its headline under the other two (sensitivity).",
    "intruder_population": "For the risk report's human threat model, e.g. \u201cUK adults "
    "on Prolific, 18 to 65\u201d. The human rate depends on who the intruders are.",
    "intruder_recruitment": "e.g. the Prolific filters the study used (country, approval "
    "rate, first language) and any screening questions.",
    "intruder_familiarity": "e.g. \u201cnone screened; the famous persons are widely "
    "known in the UK\u201d.",
    "ask_familiarity": "Asked on the debrief, after the intruder's last answer is locked, so it "
    "cannot steer their answers; the risk report then splits each person's human rate into "
    "familiarity \u00d7 identified-given-familiar. Famous persons only: it is never asked "
    "about private, semi-famous or fictitious persons, whose names the question would reveal "
    "to people who never saw them, and whom nobody can have \u201cheard of\u201d in a way "
    "that means the same.",
    "familiarity_decoys": "One name per line. Each intruder is asked only about the famous "
    "persons whose texts they judged, listed in alphabetical order among as many decoys (at "
    "least three), so a list shared on a forum names no study person. Use public figures "
    "of the same kind as the study's persons; names that score at or above the threshold "
    "against a study person are never shown. Empty: a shipped list of well-known public "
    "figures. The risk report says how often decoys were ticked.",
    "is_open": "New studies start closed: tick once the consent text and the texts are "
    "ready and the exclusion rules are recorded (Flagged answers; they "
    "lock at the first participant). A study without a consent text cannot open. Untick to "
    "stop new enrolments; people already in may finish.",
    "source_studies": "Their writers' descriptions (and targets) are copied into this study "
    "with their provenance, now and whenever you anonymize.",
    "telemetry_signals": "Counts and times only, never what is typed: time on the page and "
    "typing time, keystrokes, pastes, copies of the text, time away from the page. The "
    "consent page says which are recorded. Unticked signals are neither sent nor stored.",
    "discourage_copy": "Copying is recorded either way; this shows a reminder when it happens.",
    "allow_same_target": "Off (recommended): no intruder judges two texts about the same "
    "person, so their judgments stay independent.",
    "attention_checks": "0 (default) = none. Each check is a short item between two texts "
    "that asks for a given word; it is scored apart and never counted as a text. A failed "
    "check flags all the intruder's judgments \u201cattention failed\u201d (see the "
    "exclusion rules).",
    "catch_trials_per_participant": "How many of each intruder's texts per intruder are "
    "catch trials (texts about made-up persons, added on Flagged answers), at random "
    "positions: with 10 texts and 2 (the default), 8 of the study's texts and 2 catch trials. "
    "Catch trials take none of the texts' places and never count in the rates. The catch-"
    "trial flag asks for two namings by default, so one honest overclaim flags nobody. A "
    "study with fewer catch trials shows each intruder all of them.",
    "attention_check_prompt": "Leave empty for the built-in checks (\u201ctype the word "
    "'orange'\u201d and the like, a different word each). Participants never see the "
    "expected answer field.",
    "attention_check_answer": "Needed with a written instruction; case, accents and "
    "punctuation are ignored when scoring.",
}


class StudyForm(forms.ModelForm):
    """Study settings; bounds are checked per field so errors appear beside the field.

    The numeric fields are the model's own, with the ranges of its validators
    (`bounded_formfield`): the form never spells a bound of its own.
    """

    groups = forms.MultipleChoiceField(
        choices=PersonGroup.choices, required=False, widget=forms.CheckboxSelectMultiple
    )
    source_studies = forms.ModelMultipleChoiceField(
        queryset=Study.objects.none(), required=False, widget=forms.CheckboxSelectMultiple
    )
    telemetry_signals = forms.MultipleChoiceField(
        choices=[(name, name) for name in TELEMETRY_SIGNALS],
        required=False,
        initial=list(TELEMETRY_SIGNALS),
        widget=forms.CheckboxSelectMultiple,
    )

    class Meta:
        model = Study
        fields = ["slug", *studies.EDITABLE_FIELDS]
        formfield_callback = bounded_formfield
        widgets = {
            "consent_text": forms.Textarea(attrs={"rows": 4}),
            "instructions_text": forms.Textarea(attrs={"rows": 4}),
            "debrief_text": forms.Textarea(attrs={"rows": 4}),
            "intruder_population": forms.Textarea(attrs={"rows": 2}),
            "intruder_recruitment": forms.Textarea(attrs={"rows": 2}),
            "intruder_familiarity": forms.Textarea(attrs={"rows": 2}),
            "familiarity_decoys": forms.Textarea(attrs={"rows": 3}),
        }

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

        collections = Study.objects.filter(kind=Study.Kind.COLLECTION)
        if user is not None:
            collections = collections.filter(pk__in=studies_visible_to(user).values("pk"))
        if self.instance.pk:
            collections = collections.exclude(pk=self.instance.pk)
            self.fields["source_studies"].initial = list(self.instance.source_studies.all())
        self.fields["source_studies"].queryset = collections.order_by("title")
        for optional in ("attention_checks", "catch_trials_per_participant"):
            if optional in self.fields:
                self.fields[optional].required = False  # an empty box means none
        for name, field in self.fields.items():
            field.label = LABELS.get(name, field.label)
            field.help_text = HELP.get(name, "")
            if field.help_text:
                field.widget.attrs["aria-describedby"] = f"id_{name}_help"

    def clean(self) -> dict[str, Any]:
        """Drop source studies from a collection study (their boxes may be hidden, not empty)."""
        data = super().clean()
        # An empty box (or one a collection study hides) means no attention checks.
        data["attention_checks"] = data.get("attention_checks") or 0
        data["catch_trials_per_participant"] = data.get("catch_trials_per_participant") or 0
        if data.get("kind") != Study.Kind.INTRUDER:
            data["source_studies"] = []
            data["attention_checks"] = 0
        return data

    def rows(self) -> list[tuple[forms.BoundField, str]]:
        """Return each field with the study kind it belongs to ("" = every kind)."""
        return [(self[name], KIND_FIELDS.get(name, "")) for name in self.fields]

    def add_service_error(self, error: ValidationError) -> None:
        """Show a service's ValidationError on the fields it names (else on the form)."""
        if hasattr(error, "error_dict"):
            for field, errors in error.error_dict.items():
                self.add_error(field if field in self.fields else None, errors)
        else:
            self.add_error(None, error)


class StudyEditForm(StudyForm):
    class Meta(StudyForm.Meta):
        fields = list(studies.EDITABLE_FIELDS)


class ImportForm(forms.Form):
    file = forms.FileField(
        label="File to import",
        help_text="CSV or JSONL (.csv, .jsonl): targets, descriptions or anonymized texts, "
        "including this platform's own exports.",
        error_messages={"required": "Choose a CSV or JSONL file to import."},
    )

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        limit_mb = settings.INTRUDER_IMPORT_MAX_MB
        if upload.size > limit_mb * 1024 * 1024:
            raise ValidationError(
                f"The file is {upload.size / 1024 / 1024:.1f} MB; the largest import is "
                f"{limit_mb:g} MB (INTRUDER_IMPORT_MAX_MB). Split it, or use "
                "`manage.py import_study_data`."
            )
        return upload


class AccountRoleForm(forms.Form):
    """Give an existing account one of `ROLES` (a study's or a project's; subclasses name them)."""

    ROLES: list[tuple[str, str]] = []

    username = forms.CharField(label="Username", max_length=150)
    role = forms.ChoiceField(label="Role", choices=())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = self.ROLES

    def clean_username(self) -> Any:
        name = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise ValidationError(f"No account is called “{name}”.")
        return user


class MemberForm(AccountRoleForm):
    """Give an existing account a role on the study."""

    ROLES = [
        (StudyMember.Role.EDITOR, "Editor: may change the study"),
        (StudyMember.Role.VIEWER, "Viewer: may only look"),
    ]


class CloneForm(forms.Form):
    """Name the copy of a study."""

    slug = forms.SlugField(label=LABELS["slug"], help_text=HELP["slug"])
    title = forms.CharField(label=LABELS["title"], max_length=200)

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if Study.objects.filter(slug=slug).exists():
            raise ValidationError("A study with this short name already exists.")
        return slug

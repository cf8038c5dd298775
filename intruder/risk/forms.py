"""Forms of risk's pages: a new attack run (the risk page) and a guard run (the review page).

Both ask for the background the same way (`BackgroundForm`: the study's own descriptions in
k folds, or uploaded documents, parsed here), and every range comes from `intruder.bounds`; the
start services check what the forms pass on (`uploaded_background_check`).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from guard import GuardConfig, ordinal
from intruder.bounds import FOLDS, GUARD_BUDGET, KNOWLEDGE_BUDGET, RANK, RESAMPLES, SEED
from intruder.models import Study
from intruder.risk import attack_runs
from intruder.risk.background_uploads import BackgroundUploadError, parse_background_uploads
from intruder.risk.guarding import reachable_rank
from intruder.risk.methods import method_label
from intruder.risk.models import StudyRun

UPLOAD_HELP = "TXT files named for the target key, or CSV/JSONL with columns target and text."


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Accept several files (Django's documented recipe for multiple uploads)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> Any:
        if isinstance(data, list | tuple):
            return [super(MultipleFileField, self).clean(d, initial) for d in data]
        return super().clean(data, initial)


def _parsed(value: Any) -> dict[str, str]:
    """Return target key -> text of a file field's uploads; a bad file is the field's error."""
    files = value if isinstance(value, list) else [value] if value else []
    try:
        return parse_background_uploads((f.name, f.read()) for f in files)
    except BackgroundUploadError as error:
        raise ValidationError(str(error)) from None


class BackgroundForm(forms.Form):
    """The background of a study run: the study's own descriptions in k folds (the default),
    or documents uploaded per target person; `cleaned_data["documents"]` holds them parsed."""

    background = forms.ChoiceField(
        choices=StudyRun.Background.choices,
        initial=StudyRun.Background.CROSS_VALIDATED,
        required=False,
    )
    folds = forms.IntegerField(
        **FOLDS.field_kwargs(),
        initial=FOLDS.default,
        label="Cross-validation folds",
        required=False,
    )
    documents = MultipleFileField(
        required=False,
        label="Background documents",
        help_text=f"For uploaded background: {UPLOAD_HELP}",
    )

    def clean_background(self) -> str:
        return self.cleaned_data["background"] or StudyRun.Background.CROSS_VALIDATED

    def clean_folds(self) -> int:
        folds = self.cleaned_data["folds"]
        return FOLDS.default if folds is None else folds

    def clean_documents(self) -> dict[str, str]:
        if self.cleaned_data.get("background") != StudyRun.Background.UPLOADED:
            return {}
        return _parsed(self.cleaned_data["documents"])


class AttackRunForm(BackgroundForm):
    """The settings of a new attack run; choices depend on the study's methods."""

    field_order = [
        "attacks",
        "methods",
        "background",
        "folds",
        "seed",
        "knowledge_budget",
        "budget_resamples",
        "documents",
        "distractors",
    ]

    attacks = forms.MultipleChoiceField(
        choices=[(a, a) for a in attack_runs.ALL_ATTACKS],
        initial=list(attack_runs.CHEAP_ATTACKS),
        widget=forms.CheckboxSelectMultiple,
        help_text="TRIA trains a transformer per fold: minutes to hours on a CPU.",
    )
    methods = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    seed = forms.IntegerField(**SEED.field_kwargs(), initial=SEED.default)
    knowledge_budget = forms.IntegerField(
        **KNOWLEDGE_BUDGET.field_kwargs(),
        required=False,
        label="Knowledge budget b (descriptions per person)",
        help_text="Optional, with the study's own descriptions and the retrieval attacks: the "
        "attacker knows each person through b descriptions drawn at random (as well as b "
        "writers do), averaged over the resamples. Empty: every description outside the fold.",
    )
    budget_resamples = forms.IntegerField(
        **RESAMPLES.field_kwargs(),
        required=False,
        label="resamples R",
        help_text=f"Random draws of the b descriptions (default {RESAMPLES.default}, at least "
        f"{RESAMPLES.low}).",
    )
    distractors = MultipleFileField(
        required=False,
        label="Distractor population (open world)",
        help_text="Optional: persons who are not in the study, in the same formats (TXT named "
        "for the person, or CSV/JSONL with columns target and text). Each becomes one more "
        "candidate in every background; study persons among them are dropped. With a "
        "knowledge budget each is known through its one document in every draw.",
    )

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        methods = [*attack_runs.study_methods(study), *attack_runs.baseline_methods()]
        self.fields["methods"].choices = [(m, method_label(m)) for m in methods]
        self.fields["methods"].initial = [
            *attack_runs.study_methods(study),
            attack_runs.CLEAR,
            attack_runs.SPACY_NER,
        ]

    def clean_distractors(self) -> dict[str, str]:
        return _parsed(self.cleaned_data["distractors"])


class GuardForm(BackgroundForm):
    """Settings of a "mask until the machine attackers rank the person k-th or worse" job.

    `candidates`: how many persons the study's own descriptions hold (`guard_candidates`),
    so the form offers a k the study can reach and refuses a larger one next to the field.
    """

    field_order = ["rank", "budget", "background", "folds", "documents"]

    rank = forms.IntegerField(**RANK.field_kwargs(), initial=GuardConfig.k, label="Rank")
    budget = forms.FloatField(**GUARD_BUDGET.field_kwargs(), initial=GuardConfig.budget)

    def __init__(self, *args: Any, candidates: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.candidates = candidates
        self.fields["rank"].initial = reachable_rank(candidates)
        self.fields["rank"].help_text = (
            f"Stop once both attacks rank the person at this rank or worse. The study's "
            f"descriptions are about {candidates} person{'s' if candidates != 1 else ''}: the "
            f"rank is at most "
            f"{candidates} with them as background (an uploaded background allows as many "
            "as it has persons)."
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        rank = data.get("rank")
        own = data.get("background") == StudyRun.Background.CROSS_VALIDATED
        if own and rank is not None and rank > self.candidates:
            self.add_error(
                "rank",
                f"rank {rank} is more than the {self.candidates} persons the study's "
                f"descriptions are about: no text can rank its person {ordinal(rank)} or worse. "
                f"Use rank {self.candidates} or less, or upload a background with more persons.",
            )
        return data

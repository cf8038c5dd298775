"""Query-string filters of the API's list endpoints (django-filter).

Study filters take the numeric id, never a model choice: a choice field would answer
"not a valid choice" for other researchers' studies and so confirm that they exist. Ids are
whole numbers that fit the database's 64-bit column; anything else is a 400, never a
database overflow (a 500).
"""

from __future__ import annotations

from typing import Any

import django_filters as filters
from django import forms

from intruder.models import (
    AnonymizedText,
    Description,
    Job,
    Judgment,
    Participant,
    PersonGroup,
    Study,
    TargetPerson,
)

MAX_DATABASE_ID = 2**63 - 1


class IdFilter(filters.NumberFilter):
    """Filter by a row id: an integer from 0 to 2**63 - 1."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", MAX_DATABASE_ID)
        super().__init__(*args, **kwargs)


class StudyFilter(filters.FilterSet):
    kind = filters.ChoiceFilter(choices=Study.Kind.choices)
    is_open = filters.BooleanFilter()
    title = filters.CharFilter(lookup_expr="icontains", help_text="Part of the title.")

    class Meta:
        model = Study
        fields = ["kind", "is_open", "title"]


class TargetFilter(filters.FilterSet):
    study = IdFilter(field_name="study_id")
    group = filters.ChoiceFilter(choices=PersonGroup.choices)
    key = filters.CharFilter()

    class Meta:
        model = TargetPerson
        fields = ["study", "group", "key"]


class DescriptionFilter(filters.FilterSet):
    study = IdFilter(field_name="study_id")
    target = IdFilter(field_name="target_id")
    group = filters.ChoiceFilter(field_name="target__group", choices=PersonGroup.choices)
    writer = IdFilter(field_name="writer_id")
    external_id = filters.CharFilter()

    class Meta:
        model = Description
        fields = ["study", "target", "group", "writer", "external_id"]


class AnonymizedTextFilter(filters.FilterSet):
    study = IdFilter(field_name="description__study_id")
    description = IdFilter(field_name="description_id")
    group = filters.ChoiceFilter(
        field_name="description__target__group", choices=PersonGroup.choices
    )
    status = filters.ChoiceFilter(choices=AnonymizedText.Status.choices)
    method = filters.CharFilter()

    class Meta:
        model = AnonymizedText
        fields = ["study", "description", "group", "status", "method"]


class ParticipantFilter(filters.FilterSet):
    study = IdFilter(field_name="study_id")
    status = filters.ChoiceFilter(choices=Participant.Status.choices)
    group = filters.ChoiceFilter(choices=PersonGroup.choices)
    prolific_pid = filters.CharFilter()

    class Meta:
        model = Participant
        fields = ["study", "status", "group", "prolific_pid"]


class JudgmentFilter(filters.FilterSet):
    study = IdFilter(field_name="participant__study_id")
    participant = IdFilter(field_name="participant_id")
    text = IdFilter(field_name="text_id")
    group = filters.ChoiceFilter(
        field_name="text__description__target__group",
        choices=PersonGroup.choices,
        help_text="Group of the described (target) person.",
    )
    self_identified = filters.BooleanFilter()
    identified = filters.BooleanFilter()
    named_other = filters.BooleanFilter()

    class Meta:
        model = Judgment
        fields = [
            "study",
            "participant",
            "text",
            "group",
            "self_identified",
            "identified",
            "named_other",
        ]


class JobFilter(filters.FilterSet):
    study = IdFilter(field_name="study_id")
    status = filters.ChoiceFilter(choices=Job.Status.choices)
    kind = filters.CharFilter()

    class Meta:
        model = Job
        fields = ["study", "status", "kind"]

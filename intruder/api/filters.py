"""Query-string filters of the API's list endpoints (django-filter).

Study filters take the numeric id, never a model choice: a choice field would answer
"not a valid choice" for other researchers' studies and so confirm that they exist.
"""

from __future__ import annotations

import django_filters as filters

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


class StudyFilter(filters.FilterSet):
    kind = filters.ChoiceFilter(choices=Study.Kind.choices)
    is_open = filters.BooleanFilter()
    title = filters.CharFilter(lookup_expr="icontains", help_text="Part of the title.")

    class Meta:
        model = Study
        fields = ["kind", "is_open", "title"]


class TargetFilter(filters.FilterSet):
    study = filters.NumberFilter(field_name="study_id")
    group = filters.ChoiceFilter(choices=PersonGroup.choices)
    key = filters.CharFilter()

    class Meta:
        model = TargetPerson
        fields = ["study", "group", "key"]


class DescriptionFilter(filters.FilterSet):
    study = filters.NumberFilter(field_name="study_id")
    target = filters.NumberFilter(field_name="target_id")
    group = filters.ChoiceFilter(field_name="target__group", choices=PersonGroup.choices)
    writer = filters.NumberFilter(field_name="writer_id")
    external_id = filters.CharFilter()

    class Meta:
        model = Description
        fields = ["study", "target", "group", "writer", "external_id"]


class AnonymizedTextFilter(filters.FilterSet):
    study = filters.NumberFilter(field_name="description__study_id")
    description = filters.NumberFilter(field_name="description_id")
    group = filters.ChoiceFilter(
        field_name="description__target__group", choices=PersonGroup.choices
    )
    status = filters.ChoiceFilter(choices=AnonymizedText.Status.choices)
    method = filters.CharFilter()

    class Meta:
        model = AnonymizedText
        fields = ["study", "description", "group", "status", "method"]


class ParticipantFilter(filters.FilterSet):
    study = filters.NumberFilter(field_name="study_id")
    status = filters.ChoiceFilter(choices=Participant.Status.choices)
    group = filters.ChoiceFilter(choices=PersonGroup.choices)
    prolific_pid = filters.CharFilter()

    class Meta:
        model = Participant
        fields = ["study", "status", "group", "prolific_pid"]


class JudgmentFilter(filters.FilterSet):
    study = filters.NumberFilter(field_name="participant__study_id")
    participant = filters.NumberFilter(field_name="participant_id")
    text = filters.NumberFilter(field_name="text_id")
    group = filters.ChoiceFilter(
        field_name="text__description__target__group",
        choices=PersonGroup.choices,
        help_text="Group of the described (target) person.",
    )
    self_identified = filters.BooleanFilter()
    identified = filters.BooleanFilter()

    class Meta:
        model = Judgment
        fields = ["study", "participant", "text", "group", "self_identified", "identified"]


class JobFilter(filters.FilterSet):
    study = filters.NumberFilter(field_name="study_id")
    status = filters.ChoiceFilter(choices=Job.Status.choices)
    kind = filters.CharFilter()

    class Meta:
        model = Job
        fields = ["study", "status", "kind"]

"""Attack runs and their per-text results: list, detail, start, and the results to page through;
guard runs and their per-text results, read-only (the review page starts them)."""

from __future__ import annotations

import django_filters as filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from intruder.api.access import can_edit_study, studies_visible_to
from intruder.api.base import StudyScopedDetailApi, StudyScopedListApi
from intruder.api.filters import IdFilter
from intruder.bounds import FOLDS, KNOWLEDGE_BUDGET, RESAMPLES, SEED
from intruder.risk import attack_runs
from intruder.risk.models import AttackResult, AttackRun, GuardResult, GuardRun


class AttackRunFilter(filters.FilterSet):
    study = IdFilter(field_name="study_id")
    purpose = filters.ChoiceFilter(choices=AttackRun.Purpose.choices)

    class Meta:
        model = AttackRun
        fields = ["study", "purpose"]


class AttackResultFilter(filters.FilterSet):
    run = IdFilter(field_name="run_id")
    study = IdFilter(field_name="run__study_id")
    method = filters.CharFilter()
    attack = filters.CharFilter()
    description = IdFilter(field_name="description_id")
    correct = filters.BooleanFilter(method="filter_correct", help_text="Ranked first.")

    class Meta:
        model = AttackResult
        fields = ["run", "study", "method", "attack", "description", "correct"]

    def filter_correct(self, queryset, name, value):
        return queryset.filter(true_rank=1) if value else queryset.exclude(true_rank=1)


class RunSerializer(serializers.ModelSerializer):
    """A run (attack or guard) with its job's status and progress; the job may be gone."""

    job_status = serializers.CharField(source="job.status", read_only=True, default=None)
    progress_done = serializers.IntegerField(source="job.progress_done", default=0)
    progress_total = serializers.IntegerField(source="job.progress_total", default=0)


RUN_FIELDS = ["id", "study", "job", "job_status", "progress_done", "progress_total"]


class AttackRunListApi(StudyScopedListApi):
    """List the attack runs (and risk checks) of the user's studies, with their job's progress."""

    class OutputSerializer(RunSerializer):
        trir = serializers.JSONField(source="summary.trir", default=dict, read_only=True)
        distractors = serializers.SerializerMethodField(
            help_text="Count of distractor candidates (persons outside the study)."
        )

        def get_distractors(self, run: AttackRun) -> int:
            return len(run.distractor_documents or {})

        class Meta:
            model = AttackRun
            ref_name = "AttackRun"
            fields = [
                *RUN_FIELDS,
                "purpose",
                "attacks",
                "methods",
                "background",
                "distractors",
                "folds",
                "seed",
                "knowledge_budget",
                "budget_resamples",
                "config",
                "trir",
                "created_by",
                "created_at",
            ]

    base_queryset = AttackRun.objects.select_related("job")
    filterset_class = AttackRunFilter
    ordering_fields = ["id", "created_at"]
    serializer_class = OutputSerializer


class AttackRunDetailApi(StudyScopedDetailApi):
    """Show one attack run: settings, progress and TRIR per method and attack."""

    base_queryset = AttackRunListApi.base_queryset
    serializer_class = AttackRunListApi.OutputSerializer


class AttackRunCreateApi(APIView):
    """Start an attack run on a study's texts (owner and editors); it runs as a background job."""

    class InputSerializer(serializers.Serializer):
        study = serializers.IntegerField()
        purpose = serializers.ChoiceField(
            choices=AttackRun.Purpose.choices, default=AttackRun.Purpose.REPORT
        )
        attacks = serializers.ListField(
            child=serializers.ChoiceField(choices=attack_runs.ALL_ATTACKS),
            default=list(attack_runs.CHEAP_ATTACKS),
        )
        methods = serializers.ListField(child=serializers.CharField(max_length=50), min_length=1)
        background = serializers.ChoiceField(
            choices=AttackRun.Background.choices, default=AttackRun.Background.CROSS_VALIDATED
        )
        background_documents = serializers.DictField(
            child=serializers.CharField(), required=False, help_text="target key -> text"
        )
        distractor_documents = serializers.DictField(
            child=serializers.CharField(),
            required=False,
            help_text="Open-world ladder: person name -> text, persons outside the study added "
            "as candidates (study persons and study texts are dropped, and named in the run's "
            "summary).",
        )
        folds = serializers.IntegerField(**FOLDS.field_kwargs(), default=FOLDS.default)
        seed = serializers.IntegerField(**SEED.field_kwargs(), default=SEED.default)
        config = serializers.DictField(required=False, help_text="Attack config overrides.")
        knowledge_budget = serializers.IntegerField(
            **KNOWLEDGE_BUDGET.field_kwargs(),
            required=False,
            allow_null=True,
            default=None,
            help_text="b: descriptions known per candidate, drawn at random from the study's own "
            "(the attacker knows each candidate as well as b writers do); empty = all.",
        )
        budget_resamples = serializers.IntegerField(
            **RESAMPLES.field_kwargs(),
            required=False,
            allow_null=True,
            default=None,
            help_text="R: random draws of the b descriptions, averaged (default 10 with a budget).",
        )

        class Meta:
            ref_name = "AttackRunCreateInput"

        def validate_config(self, value: dict) -> dict:
            """Refuse keys that name server paths: only training settings come from a client."""
            refused = sorted(set(value) & attack_runs.SERVER_CONFIG_KEYS)
            if refused:
                raise serializers.ValidationError(
                    f"{', '.join(refused)} cannot be set through the API (server paths)"
                )
            return value

    @extend_schema(
        request=InputSerializer,
        responses={201: AttackRunListApi.OutputSerializer, 409: None},
        operation_id="attack_runs_create",
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        study = get_object_or_404(studies_visible_to(request.user), pk=values.pop("study"))
        if not can_edit_study(request.user, study):
            raise PermissionDenied("only the study's owner or editors can start attack runs")
        run = attack_runs.attack_run_start(study=study, user=request.user, **values)
        return Response(AttackRunListApi.OutputSerializer(run).data, status=status.HTTP_201_CREATED)


class AttackResultListApi(StudyScopedListApi):
    """List per-text attack results: prediction, rank and probability of the true person."""

    class OutputSerializer(serializers.ModelSerializer):
        target_key = serializers.CharField(source="description.target.key", read_only=True)
        external_id = serializers.CharField(source="description.external_id", read_only=True)
        correct = serializers.BooleanField(read_only=True)

        class Meta:
            model = AttackResult
            ref_name = "AttackResult"
            fields = [
                "id",
                "run",
                "description",
                "external_id",
                "anonymized_text",
                "target_key",
                "method",
                "attack",
                "fold",
                "predicted_key",
                "correct",
                "true_rank",
                "true_prob",
                "top_k",
                "masked_share",
                "driving_words",
                "hit_share",
                "created_at",
            ]

    study_lookup = "run__study"
    base_queryset = AttackResult.objects.select_related("description__target")
    filterset_class = AttackResultFilter
    ordering_fields = ["id", "true_rank", "true_prob"]
    serializer_class = OutputSerializer


class GuardRunFilter(filters.FilterSet):
    study = IdFilter(field_name="study_id")

    class Meta:
        model = GuardRun
        fields = ["study"]


class GuardResultFilter(filters.FilterSet):
    run = IdFilter(field_name="run_id")
    study = IdFilter(field_name="run__study_id")
    anonymized_text = IdFilter(field_name="anonymized_text_id")
    flagged = filters.BooleanFilter(help_text="An attack still ranks the person better than k-th.")

    class Meta:
        model = GuardResult
        fields = ["run", "study", "anonymized_text", "flagged"]


class GuardRunListApi(StudyScopedListApi):
    """List the guard runs of the user's studies: settings, counts and their job's progress."""

    class OutputSerializer(RunSerializer):
        class Meta:
            model = GuardRun
            ref_name = "GuardRun"
            fields = [
                *RUN_FIELDS,
                "rank",
                "attacks",
                "budget",
                "background",
                "folds",
                "seed",
                "summary",
                "created_by",
                "created_at",
            ]

    base_queryset = GuardRun.objects.select_related("job")
    filterset_class = GuardRunFilter
    ordering_fields = ["id", "created_at"]
    serializer_class = OutputSerializer


class GuardRunDetailApi(StudyScopedDetailApi):
    """Show one guard run: settings, progress and counts."""

    base_queryset = GuardRunListApi.base_queryset
    serializer_class = GuardRunListApi.OutputSerializer


class GuardResultListApi(StudyScopedListApi):
    """List per-text guard results: each attack's rank of the person before and after, the
    words masked and those the attacks still lean on (stored as the job makes them)."""

    class OutputSerializer(serializers.ModelSerializer):
        target_key = serializers.CharField(source="target", read_only=True)

        class Meta:
            model = GuardResult
            ref_name = "GuardResult"
            fields = [
                "id",
                "run",
                "anonymized_text",
                "description",
                "target_key",
                "rank_before",
                "rank_after",
                "masked_words",
                "guard_spans",
                "residual_words",
                "changed",
                "flagged",
                "reason",
                "created_at",
            ]

    study_lookup = "run__study"
    base_queryset = GuardResult.objects.all()
    filterset_class = GuardResultFilter
    ordering_fields = ["id"]
    serializer_class = OutputSerializer

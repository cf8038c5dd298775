"""Django admin for every model of the platform."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import ValidationError

from intruder.evidence.models import AttentionCheck, PageView
from intruder.llm_intruder.models import LLMGuess
from intruder.models import (
    AnonymizedText,
    Assignment,
    Description,
    FamiliarityAnswer,
    FamiliarityDecoyAnswer,
    ImportBatch,
    Job,
    Judgment,
    Participant,
    Study,
    StudyMember,
    TargetPerson,
    WritingTask,
)
from intruder.prolific.claims import claim_approve, claim_refuse
from intruder.prolific.models import (
    ProlificAction,
    ProlificSignedDelivery,
    ProlificStudyClaim,
    ProlificStudyState,
    ProlificSubmission,
    ProlificWebhookEvent,
)
from intruder.reports.models import ComputedReport
from intruder.services.jobs import JobError, job_retry


class StudyMemberInline(admin.TabularInline):
    model = StudyMember
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "kind", "owner", "is_open", "created_at"]
    list_filter = ["kind", "is_open"]
    search_fields = ["title", "slug"]
    prepopulated_fields = {"slug": ["title"]}
    inlines = [StudyMemberInline]


@admin.register(StudyMember)
class StudyMemberAdmin(admin.ModelAdmin):
    list_display = ["study", "user", "role"]
    list_filter = ["role", "study"]


@admin.register(TargetPerson)
class TargetPersonAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "group", "study"]
    list_filter = ["group", "study"]
    search_fields = ["name", "key"]


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ["prolific_pid", "study", "status", "group", "started_at", "completed_at"]
    list_filter = ["status", "group", "study"]
    search_fields = ["prolific_pid", "prolific_session_id"]
    exclude = ["token"]  # a session credential: never shown


@admin.register(FamiliarityDecoyAnswer)
class FamiliarityDecoyAnswerAdmin(admin.ModelAdmin):
    list_display = ["participant", "name", "heard_of", "simulated", "created_at"]
    list_filter = ["heard_of", "simulated", "participant__study"]


@admin.register(FamiliarityAnswer)
class FamiliarityAnswerAdmin(admin.ModelAdmin):
    list_display = ["participant", "target", "heard_of", "simulated", "created_at"]
    list_filter = ["heard_of", "simulated", "target__study"]


@admin.register(Description)
class DescriptionAdmin(admin.ModelAdmin):
    list_display = ["__str__", "study", "target", "writer", "created_at"]
    list_filter = ["study", "target__group"]
    search_fields = ["external_id", "text"]
    raw_id_fields = ["writer", "target"]


@admin.register(WritingTask)
class WritingTaskAdmin(admin.ModelAdmin):
    list_display = ["participant", "position", "target", "description"]
    raw_id_fields = ["participant", "target", "description"]


@admin.register(AnonymizedText)
class AnonymizedTextAdmin(admin.ModelAdmin):
    list_display = ["__str__", "method", "model_version", "status", "revision", "updated_at"]
    list_filter = ["status", "method", "description__study"]
    search_fields = ["text", "description__external_id"]
    raw_id_fields = ["description", "reviewed_by"]
    readonly_fields = ["revision"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["participant", "text", "position", "slot", "status", "assigned_at"]
    list_filter = ["status", "participant__study"]
    raw_id_fields = ["participant", "text"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["participant", "text", "self_identified", "guessed_name", "identified"]
    list_filter = ["self_identified", "identified", "participant__study"]
    search_fields = ["guessed_name", "participant__prolific_pid"]
    raw_id_fields = ["assignment", "participant", "text"]


@admin.register(AttentionCheck)
class AttentionCheckAdmin(admin.ModelAdmin):
    list_display = ["participant", "after_texts", "expected", "answer", "passed", "answered_at"]
    list_filter = ["passed", "participant__study"]
    raw_id_fields = ["participant"]


@admin.action(description="Retry the selected failed jobs")
def retry_jobs(modeladmin: admin.ModelAdmin, request: object, queryset: object) -> None:

    for job in queryset.filter(status=Job.Status.FAILED):
        try:
            job_retry(job=job)
        except JobError:
            continue


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = [
        "pk", "kind", "study", "status", "progress_done", "progress_total", "attempts",
        "heartbeat_at", "worker",
    ]  # fmt: skip
    list_filter = ["status", "kind"]
    readonly_fields = ["created_at", "started_at", "finished_at", "heartbeat_at", "worker"]
    actions = [retry_jobs]


from intruder.risk import admin as risk_admin  # noqa: E402, F401  (attack runs, in the risk package)


class ReadOnlyAdmin(admin.ModelAdmin):
    """An audit trail: viewable, never edited or added by hand."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ComputedReport)
class ComputedReportAdmin(ReadOnlyAdmin):
    """Stored report pages: read-only (the refresh job writes them, a data change retires them;
    deleting one makes its page compute it again)."""

    list_display = ["id", "study", "project", "name", "args", "computed_at", "compute_ms"]
    list_filter = ["name"]
    exclude = ["content"]  # a pickled report: not a form field
    raw_id_fields = ["study", "project"]


@admin.register(ProlificStudyState)
class ProlificStudyStateAdmin(admin.ModelAdmin):
    list_display = ["study", "status", "status_at", "synced_at"]


@admin.register(ProlificSubmission)
class ProlificSubmissionAdmin(ReadOnlyAdmin):
    list_display = ["prolific_pid", "study", "status", "status_at"]
    list_filter = ["status", "study"]
    search_fields = ["prolific_pid", "submission_id"]


@admin.register(ProlificWebhookEvent)
class ProlificWebhookEventAdmin(ReadOnlyAdmin):
    list_display = ["event_id", "event_type", "occurred_at", "outcome", "received_at"]
    list_filter = ["event_type", "outcome"]
    search_fields = ["event_id"]


@admin.register(ProlificSignedDelivery)
class ProlificSignedDeliveryAdmin(ReadOnlyAdmin):
    list_display = ["event_id", "signed_digest", "received_at"]
    search_fields = ["event_id", "signed_digest"]


@admin.register(ProlificAction)
class ProlificActionAdmin(ReadOnlyAdmin):
    list_display = ["kind", "prolific_pid", "study", "amount", "status", "created_by", "updated_at"]
    list_filter = ["kind", "status", "study"]
    search_fields = ["prolific_pid", "key"]


@admin.action(description="Approve the selected Prolific study claims")
def approve_claims(modeladmin: admin.ModelAdmin, request, queryset) -> None:
    for claim in queryset.filter(approved_at__isnull=True):
        try:
            claim_approve(claim=claim, by=request.user)
        except ValidationError as error:
            modeladmin.message_user(
                request, f"{claim}: {' '.join(error.messages)}", level=messages.ERROR
            )


@admin.action(description="Refuse the selected Prolific study claims awaiting approval")
def refuse_claims(modeladmin: admin.ModelAdmin, request, queryset) -> None:
    for claim in queryset.filter(approved_at__isnull=True):
        claim_refuse(claim=claim, by=request.user)


@admin.register(ProlificStudyClaim)
class ProlificStudyClaimAdmin(ReadOnlyAdmin):
    """Claims are made by the platform; a site administrator approves or refuses the ones
    typed in by hand (check on Prolific that the claimant made that study)."""

    list_display = [
        "prolific_study_id", "study", "claimed_by", "via", "approved_at", "approved_by",
        "created_at",
    ]  # fmt: skip
    list_filter = ["via", ("approved_at", admin.EmptyFieldListFilter)]
    search_fields = ["prolific_study_id", "study__slug"]
    actions = [approve_claims, refuse_claims]


@admin.register(ImportBatch)
class ImportBatchAdmin(ReadOnlyAdmin):
    """An unfinished import's marker: cleaned by the next import or worker start, not by hand."""

    list_display = ["study", "worker", "started_at", "heartbeat_at"]


@admin.register(LLMGuess)
class LLMGuessAdmin(ReadOnlyAdmin):
    """The open-world LLM intruder's answers, a row per text: written by its job only."""

    list_display = ["job", "anonymized_text", "identified", "cosine", "error_reason"]
    list_filter = ["identified", "error_reason"]
    raw_id_fields = ["job", "anonymized_text"]


@admin.register(PageView)
class PageViewAdmin(ReadOnlyAdmin):
    """The server's record of each serving of a text: the evidence behind the answer flags."""

    list_display = ["assignment", "served_at", "reported_at"]
    exclude = ["token"]  # the page view's token proves a report came from that page
    raw_id_fields = ["assignment"]

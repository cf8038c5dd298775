"""Admin of attack runs, guard runs and their results (imported by intruder/admin.py)."""

from __future__ import annotations

from django.contrib import admin

from intruder.reports.models import ReportFile
from intruder.risk.models import AttackResult, AttackRun, GuardResult, GuardRun


@admin.register(AttackRun)
class AttackRunAdmin(admin.ModelAdmin):
    list_display = ["id", "study", "purpose", "background", "folds", "job", "created_at"]
    list_filter = ["purpose", "background"]
    search_fields = ["study__slug"]
    raw_id_fields = ["study", "job", "created_by"]


@admin.register(AttackResult)
class AttackResultAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "description", "method", "attack", "fold", "true_rank"]
    list_filter = ["attack", "method"]
    raw_id_fields = ["run", "description", "anonymized_text"]


@admin.register(ReportFile)
class ReportFileAdmin(admin.ModelAdmin):
    """Rendered report downloads: read-only (a job writes them, a data change retires them)."""

    list_display = ["id", "run", "name", "data_version", "created_at"]
    exclude = ["content"]  # binary PDF bytes: not a form field
    raw_id_fields = ["run"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class _ReadOnlyAdmin(admin.ModelAdmin):
    """Rows a job writes: shown, never added or changed by hand (a change would make the
    review page disagree with the texts' spans); deleting goes with the study."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(GuardRun)
class GuardRunAdmin(_ReadOnlyAdmin):
    list_display = ["id", "study", "rank", "budget", "background", "folds", "job", "created_at"]
    list_filter = ["background"]
    search_fields = ["study__slug"]
    exclude = ["background_documents"]  # whole documents: not for a list page's form
    raw_id_fields = ["study", "job", "created_by"]


@admin.register(GuardResult)
class GuardResultAdmin(_ReadOnlyAdmin):
    list_display = ["id", "run", "anonymized_text", "target", "changed", "flagged", "reason"]
    list_filter = ["flagged", "changed"]
    list_select_related = ["run__study", "anonymized_text__description"]
    search_fields = ["target", "run__study__slug"]
    raw_id_fields = ["run", "anonymized_text", "description"]

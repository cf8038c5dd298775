"""Admin of attack runs and their results (imported by intruder/admin.py)."""

from __future__ import annotations

from django.contrib import admin

from intruder.models import AttackResult, AttackRun, ReportFile


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

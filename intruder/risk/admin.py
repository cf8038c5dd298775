"""Admin of attack runs and their results (imported by intruder/admin.py)."""

from __future__ import annotations

from django.contrib import admin

from intruder.models import AttackResult, AttackRun


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

"""Admin: project members (roles) and tasks (release an abandoned one)."""

from django.contrib import admin

from intruder.annotation.models import Annotator, Document, Project, ProjectMember, Task


class ProjectMemberInline(admin.TabularInline):
    model = ProjectMember
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "scheme", "annotators_per_text", "owner", "is_open"]
    search_fields = ["title", "slug"]
    inlines = [ProjectMemberInline]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["doc_id", "project", "dataset_type", "source"]
    list_filter = ["project"]
    search_fields = ["doc_id"]


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ["__str__", "project", "status", "created_at"]
    list_filter = ["project", "status"]
    exclude = ["token"]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["__str__", "slot", "status", "revision", "assigned_at", "submitted_at"]
    list_filter = ["status", "document__project"]
    list_editable = ["status"]
    raw_id_fields = ["document", "annotator"]

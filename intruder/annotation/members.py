"""Who annotates a project, managed on its own page: the owner adds and removes members."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from intruder.annotation import selectors, services
from intruder.annotation.models import Project, ProjectMember
from intruder.views.researcher.forms import AccountRoleForm


class MemberForm(AccountRoleForm):
    """Give an existing account a role in the project."""

    ROLES = [
        (ProjectMember.Role.ANNOTATOR, "Annotator: annotates texts"),
        (ProjectMember.Role.MANAGER, "Manager: also adds texts, sees progress and exports"),
    ]


def _managed(request: HttpRequest, slug: str) -> tuple[Project, bool]:
    """Return the project and whether the user may change its members (its owner).

    Managers see who takes part; only the owner grants or takes roles, as on a study.
    """
    project = Project.objects.filter(slug=slug).first()
    role = selectors.project_role(project=project, user=request.user) if project else None
    if role != ProjectMember.Role.MANAGER:
        raise Http404("No such project.")
    owner = request.user.is_superuser or project.owner_id == request.user.pk
    return project, owner


def _page(request: HttpRequest, project: Project, owner: bool, form: MemberForm | None = None):
    context = {
        "project": project,
        "can_manage": owner,
        "members": project.members.select_related("user").order_by("user__username"),
        "member_form": form or MemberForm(),
    }
    return render(request, "annotation/project_members.html", context, status=400 if form else 200)


@login_required
def project_members(request: HttpRequest, slug: str) -> HttpResponse:
    """List the project's members; the owner adds one or changes a role (POST)."""
    project, owner = _managed(request, slug)
    if request.method != "POST":
        return _page(request, project, owner)
    if not owner:
        raise PermissionDenied("only the project's owner adds members")
    form = MemberForm(request.POST)
    if not form.is_valid():
        return _page(request, project, owner, form)
    user = form.cleaned_data["username"]
    if user.pk == project.owner_id:
        form.add_error("username", "The owner manages the project already.")
        return _page(request, project, owner, form)
    role = form.cleaned_data["role"]
    services.project_member_set(project=project, user=user, role=role)
    messages.success(request, f"{user.get_username()} is now {role} of this project.")
    return redirect("annotation-members", slug=project.slug)


@login_required
@require_POST
def project_member_remove(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """Take a member's role away (her submitted annotations stay)."""
    project, owner = _managed(request, slug)
    if not owner:
        raise PermissionDenied("only the project's owner removes members")
    user = get_object_or_404(get_user_model(), pk=user_id)
    if services.project_member_remove(project=project, user=user):
        messages.success(request, f"{user.get_username()} no longer has a role in this project.")
    return redirect("annotation-members", slug=project.slug)

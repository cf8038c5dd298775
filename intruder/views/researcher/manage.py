"""Study management without the admin: members and roles, clone, archive (owners only)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from intruder.models import Study
from intruder.services import studies
from intruder.views.researcher.forms import CloneForm, MemberForm
from intruder.web.access import study_for


def _owned(request: HttpRequest, slug: str) -> Study:
    """Return the study if the user owns it (or is a superuser); editors may not manage it."""
    study, role = study_for(request, slug)
    if role != "owner":
        raise PermissionDenied("only the study's owner manages members, clones and archiving")
    return study


def _page(request: HttpRequest, study: Study, **forms: object) -> HttpResponse:
    context = {
        "study": study,
        "members": study.members.select_related("user").order_by("user__username"),
        "member_form": forms.get("member_form") or MemberForm(),
        "clone_form": forms.get("clone_form")
        or CloneForm(initial={"slug": f"{study.slug}-2", "title": f"{study.title} (copy)"}),
    }
    status = 400 if forms else 200
    return render(request, "researcher/study_manage.html", context, status=status)


@login_required
@require_GET
def study_manage(request: HttpRequest, slug: str) -> HttpResponse:
    """Show members and roles, the clone form and the archive switch."""
    return _page(request, _owned(request, slug))


@login_required
@require_POST
def member_add(request: HttpRequest, slug: str) -> HttpResponse:
    """Give an account a role on the study (or change its role)."""
    study = _owned(request, slug)
    form = MemberForm(request.POST)
    if not form.is_valid():
        return _page(request, study, member_form=form)
    user = form.cleaned_data["username"]
    if user.pk == study.owner_id:
        form.add_error("username", "The owner has every right already.")
        return _page(request, study, member_form=form)
    studies.study_member_set(study=study, user=user, role=form.cleaned_data["role"])
    messages.success(request, f"{user.get_username()} is now {form.cleaned_data['role']}.")
    return redirect("researcher-manage", slug=study.slug)


@login_required
@require_POST
def member_remove(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """Take a member's role away."""
    study = _owned(request, slug)
    user = get_object_or_404(get_user_model(), pk=user_id)
    if studies.study_member_remove(study=study, user=user):
        messages.success(request, f"{user.get_username()} no longer has a role on this study.")
    return redirect("researcher-manage", slug=study.slug)


@login_required
@require_POST
def study_clone(request: HttpRequest, slug: str) -> HttpResponse:
    """Copy the study's settings, sources, members and targets into a new, closed study."""
    study = _owned(request, slug)
    form = CloneForm(request.POST)
    if not form.is_valid():
        return _page(request, study, clone_form=form)
    try:
        clone = studies.study_clone(
            study=study,
            owner=request.user,
            slug=form.cleaned_data["slug"],
            title=form.cleaned_data["title"],
        )
    except ValidationError as exc:
        for field, errors in getattr(exc, "error_dict", {"__all__": exc.error_list}).items():
            form.add_error(field if field in form.fields else None, errors)
        return _page(request, study, clone_form=form)
    messages.success(request, f"Cloned into “{clone.title}” (closed until you open it).")
    return redirect("researcher-study", slug=clone.slug)


@login_required
@require_POST
def study_archive(request: HttpRequest, slug: str) -> HttpResponse:
    """Archive the study (closed, listed apart) or bring it back."""
    study = _owned(request, slug)
    archived = request.POST.get("archived") == "1"
    studies.study_archive(study=study, archived=archived)
    messages.success(request, "Study archived and closed." if archived else "Study restored.")
    return redirect("researcher-study", slug=study.slug)

"""Who may open a study's researcher pages: one check for every researcher view.

Superusers and the study's owner can do everything, editors can change the study, viewers
can only read (`intruder.selectors.access`). A logged-in user without a role gets 404,
so a study's existence is not revealed; a viewer who tries to change it gets 403.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from intruder.models import Study
from intruder.selectors.access import role_can_edit, study_role


def study_for(
    request: HttpRequest, slug: str, *, edit: bool = False, hide_from_readers: bool = False
) -> tuple[Study, str]:
    """Return the study and the user's role; 404 without a role, 403 for a read-only role.

    `hide_from_readers` answers a viewer's change with 404 too (the risk pages' choice: a
    viewer is not told that an action exists).
    """
    study = get_object_or_404(Study, slug=slug)
    role = study_role(request.user, study)
    if role is None:
        raise Http404("no such study")
    if edit and not role_can_edit(role):
        if hide_from_readers:
            raise Http404("no such study")
        raise PermissionDenied("viewers cannot change this study")
    return study, role

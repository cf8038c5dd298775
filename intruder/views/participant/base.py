"""What every participant page shares: the page class, what a page shows, and the replies.

oTree's `Page` is the model: a page is a class that knows its template, what it shows (from
a participant's stored state or from the researcher's preview plan), and, for a page with a
form, the post it takes. Which step a participant is on is derived from what is stored
(`selectors.participant.participant_step`); showing it is a lookup of that step's page.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from intruder.enrolment import REFUSAL_PAGES, EnrolmentRefused
from intruder.evidence.models import AttentionCheck
from intruder.models import Assignment, Participant, Study, TargetPerson
from intruder.selectors.participant import participant_get_by_token
from intruder.services.familiarity import FamiliarityItem
from intruder.services.form_state import RejectedAnswer
from intruder.services.participants import CurrentStep

if TYPE_CHECKING:
    from collections.abc import Callable

    from intruder.services.preview import PreviewPlan


@dataclass(frozen=True)
class PageContent:
    """What one page shows: filled from a participant's stored state, or from the preview's plan.

    Item pages are numbered from 1 of `total`; `assignment` needs `pk` and `text` (the
    preview passes a stand-in that is no database row).
    """

    number: int = 0
    total: int = 0
    target: TargetPerson | None = None
    position: int = 0
    assignment: Assignment | Any = None
    check: AttentionCheck | None = None
    completed: int = 0
    rejected: RejectedAnswer | None = None
    seconds_left: int = 0
    view_token: str = ""
    short_reason: str = ""
    reachable: int = 0
    familiarity: tuple[FamiliarityItem, ...] = ()


def participant_or_404(token: str) -> Participant:
    participant = participant_get_by_token(token=token)
    if participant is None:
        raise Http404("No such participant session.")
    return participant


def home_redirect(participant: Participant) -> HttpResponseRedirect:
    """Redirect to the participant's one page (post/redirect/get)."""
    return redirect("participant-home", token=participant.token)


def message(
    request: HttpRequest,
    *,
    title: str,
    text: str,
    status: int = 200,
    study: Study | None = None,
    completion_url: str = "",
    extra: dict | None = None,
) -> HttpResponse:
    """Render the message page (refusals, status pages, thanks)."""
    context = {
        **(extra or {}),
        "title": title,
        "text": text,
        "study": study,
        "completion_url": completion_url,
        "completion_code": study.completion_code if study and completion_url else "",
    }
    return render(request, "participant/message.html", context, status=status)


def refusal_page(request: HttpRequest, refusal: EnrolmentRefused, study: Study) -> HttpResponse:
    status, title, text = REFUSAL_PAGES[refusal.code]
    return message(request, title=title, text=text, status=status, study=study)


def draft_prefix(participant: Participant) -> str:
    """The prefix of the drafts the browser keeps for this participant (`participant.js`)."""
    return f"intruder-draft:{participant.token}:"


class Page:
    """One page of the participant flow, as participants and the researcher's preview see it."""

    step: ClassVar[str]
    template: ClassVar[str]
    # The form posts to p/<token>/<path>/ (URL name "participant-<path>"); "" for no form.
    path: ClassVar[str] = ""
    per_item: ClassVar[bool] = False  # shown once per text or writing task
    fields: ClassVar[tuple[str, ...]] = ()  # the answers an item page posts, kept if rejected
    preview_path: ClassVar[str] = ""  # the preview's URL step, where it is not the step's name
    forgets_drafts: ClassVar[bool] = False  # the page tells the browser to drop stored drafts

    @property
    def url_name(self) -> str:
        """Return the name of the URL the participant's form posts to."""
        return f"participant-{self.path}"

    @property
    def preview_step(self) -> str:
        """Return the step as the preview's URLs name it."""
        return self.preview_path or self.step

    def content(self, participant: Participant, current: CurrentStep) -> PageContent:
        """Return what the page shows a participant, from what is stored."""
        return PageContent()

    def preview_content(
        self, study: Study, plan: PreviewPlan, number: int, rejected: RejectedAnswer | None
    ) -> PageContent:
        """Return what the preview shows: its plan's n-th text or target, nothing stored."""
        return PageContent()

    def context(self, study: Study, content: PageContent) -> dict:
        """Return the template's context for what the page shows (participant and preview)."""
        return {}

    def participant_context(self, participant: Participant, content: PageContent) -> dict:
        """Return what only a participant's page holds beside `context` (no preview has it)."""
        return {}

    def render(
        self, request: HttpRequest, participant: Participant, current: CurrentStep
    ) -> HttpResponse:
        """Show the page to the participant on its step."""
        content = self.content(participant, current)
        context: dict = {"participant": participant, "study": participant.study}
        context |= self.context(participant.study, content)
        context |= self.participant_context(participant, content)
        context["form_action"] = reverse(self.url_name, args=[participant.token])
        if self.forgets_drafts:
            context["draft_prefix"] = draft_prefix(participant)
        return render(request, self.template, context)

    def post(self, request: HttpRequest, participant: Participant) -> HttpResponse:
        """Take the page's form and redirect to the participant's page."""
        raise NotImplementedError(f"{type(self).__name__} has no form")

    @cached_property
    def view(self) -> Callable[[HttpRequest, str], HttpResponse]:
        """The view its form posts to (one function per page, so URLs resolve to it)."""

        @never_cache
        @require_POST
        def view(request: HttpRequest, token: str) -> HttpResponse:
            return self.post(request, participant_or_404(token))

        view.__name__ = view.__qualname__ = f"{type(self).__name__}.view"
        view.__doc__ = type(self).post.__doc__
        return view


class StatusPage(Page):
    """A page with no form that says where the participant stands (left, full, timed out)."""

    template = "participant/message.html"
    forgets_drafts = True
    title: ClassVar[str]
    text: ClassVar[str]

    def message(self, participant: Participant) -> tuple[str, str, str]:
        """Return the page's title, its text and the Prolific completion URL ("" for none)."""
        return self.title, self.text, ""

    def render(
        self, request: HttpRequest, participant: Participant, current: CurrentStep
    ) -> HttpResponse:
        title, text, completion_url = self.message(participant)
        extra = {
            "participant": participant,
            "study": participant.study,
            "draft_prefix": draft_prefix(participant),
        }
        return message(
            request,
            title=title,
            text=text,
            study=participant.study,
            completion_url=completion_url,
            extra=extra,
        )

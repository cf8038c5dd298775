"""The participant views that are no page of the flow: the entry link, the one page a
participant sees (their current step's page) and the telemetry beacon."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from intruder.enrolment import (
    PARTICIPANT_RESUME,
    EnrolmentRefused,
    ProlificLink,
    new_client_admission,
)
from intruder.evidence.page_views import page_view_report
from intruder.models import Study
from intruder.prolific.client import prolific_enabled
from intruder.prolific.webhooks import submission_known
from intruder.selectors.participant import Step, participant_get_by_token, study_get_by_slug
from intruder.services.assignment import AssignmentBusy
from intruder.services.participants import (
    participant_code_reached,
    participant_current_step,
    participant_enroll,
    writer_consent_closed,
)
from intruder.views.participant.base import (
    home_redirect,
    message,
    participant_or_404,
    refusal_page,
)
from intruder.views.participant.pages import STEP_PAGES


def _prolific_check(study: Study, pid: str, session_id: str):
    """Return the "Prolific knows this place" check, or None without a token or study ID."""
    if not (prolific_enabled() and study.prolific_study_id):
        return None
    return lambda: submission_known(
        study=study, prolific_pid=pid.strip(), session_id=session_id.strip()
    )


@never_cache
@require_GET
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Enrol or resume the Prolific participant named in the query string."""
    study = study_get_by_slug(slug=slug)
    if study is None:
        raise Http404("No such study.")
    link = ProlificLink.from_request(request)
    if not link.pid.strip():
        # Same browser coming back without the query string: resume from its cookie.
        participant = participant_get_by_token(
            token=PARTICIPANT_RESUME.token(request, slug=study.slug)
        )
        if participant is not None and participant.study_id == study.pk:
            return home_redirect(participant)
    try:
        enrolment = participant_enroll(
            study=study,
            prolific_pid=link.pid,
            prolific_study_id=link.study_id,
            prolific_session_id=link.session_id,
            admit_new=new_client_admission(request),
            admit_known=_prolific_check(study, link.pid, link.session_id),
        )
    except EnrolmentRefused as refusal:
        return refusal_page(request, refusal, study)
    response = home_redirect(enrolment.participant)
    PARTICIPANT_RESUME.keep(request, response, slug=study.slug, token=enrolment.participant.token)
    return response


@never_cache
@require_GET
def home(request: HttpRequest, token: str) -> HttpResponse:
    """Show the participant's current step (consent, instructions, item, debrief, ...)."""
    participant = participant_or_404(token)
    if writer_consent_closed(participant=participant):
        return refusal_page(request, EnrolmentRefused(EnrolmentRefused.CLOSED), participant.study)
    try:
        current = participant_current_step(participant=participant)
    except AssignmentBusy:
        return message(
            request,
            title="Busy",
            text="Many people are starting at once. Please reload this page in a few seconds.",
            status=503,
            study=participant.study,
        )
    if current.step == Step.DEBRIEF:
        # The debrief shows the completion code: whoever sees it has completed, as Prolific
        # counts it, even if they close the tab instead of pressing "Finish".
        participant_code_reached(participant=participant)
    return STEP_PAGES[current.step].render(request, participant, current)


@never_cache
@require_POST
def telemetry(request: HttpRequest, token: str) -> HttpResponse:
    """Take a page view's telemetry as the participant leaves the page (a beacon): 204.

    Whatever is posted, the answer is the same empty 204, so the endpoint tells a forger
    nothing; only a report naming one of this participant's open page views is kept.
    """
    participant = participant_or_404(token)
    page_view_report(participant=participant, raw=request.POST.get("telemetry", ""))
    return HttpResponse(status=204)

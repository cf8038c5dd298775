"""The study page's rehearsal button: queue a rehearsal job (editors), shown when it ends."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from intruder.exceptions import errors_as_messages
from intruder.rehearsal.launch import RehearsalOptions, RehearsalRefused, rehearsal_job_start
from intruder.web.access import study_for
from intruder.web.job_messages import job_start_message


class RehearsalForm(forms.Form):
    """The few choices the page offers; the command line has the rest (docs/rehearsal.md)."""

    participants = forms.IntegerField(min_value=1, max_value=5000)
    seed = forms.IntegerField(min_value=0, required=False)
    target_ci = forms.FloatField(min_value=0.5, max_value=50, required=False)


@login_required
@require_POST
@errors_as_messages("researcher-study", prefix="No rehearsal queued: ")
def study_rehearse(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a dress rehearsal of the study with a simulated crowd."""
    study, _ = study_for(request, slug, edit=True)
    form = RehearsalForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(e)}" for name, e in form.errors.items())
        raise RehearsalRefused(problems)
    data = form.cleaned_data
    options = RehearsalOptions(
        participants=data["participants"],
        seed=data.get("seed") or 0,
        target_ci=data.get("target_ci") or 5.0,
    )
    job, created = rehearsal_job_start(study=study, user=request.user, options=options)
    job_start_message(
        request, job=job, created=created, name="Rehearsal", queued="a worker runs it"
    )
    return redirect("researcher-study", slug=study.slug)

"""Who a Prolific study ID belongs to: claims, their approval, and when an ID may change.

The server's token opens the whole Prolific workspace: every study in it, whoever made it,
answers the token, so "Prolific confirms the ID is this workspace's" does not say which
account on this platform may run it. A `ProlificStudyClaim` does:

- creating the draft from the platform claims its ID for the study at once;
- typing an ID into a study's settings asks for a claim, which a site administrator
  approves (Django admin, Prolific study claims); until then the study does not hold it;
- a claim outlives the study's field: an ID cleared from its study stays reserved for that
  study (its owner may put it back, or move it to another study of theirs);
- a study's ID cannot change (nor be cleared) once the Prolific study is published or the
  study has participants or Prolific submissions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from intruder.models import Study
from intruder.prolific.models import ProlificStudyClaim, ProlificStudyState, ProlificSubmission

CLAIMED_ELSEWHERE = (
    "This Prolific study is claimed by another study on this platform (the account that "
    "created its draft here, or the one a site administrator approved)."
)
HELD_ELSEWHERE = "Another study already has this Prolific study ID."


def approved_claim(prolific_study_id: str) -> ProlificStudyClaim | None:
    """Return the approved claim on `prolific_study_id` (None when nobody owns it yet)."""
    return (
        ProlificStudyClaim.objects.filter(
            prolific_study_id=prolific_study_id, approved_at__isnull=False
        )
        .select_related("study")
        .first()
    )


def claims_pending(study: Study) -> list[ProlificStudyClaim]:
    """Return the study's claims that await a site administrator's approval."""
    return list(ProlificStudyClaim.objects.filter(study=study, approved_at__isnull=True))


def prolific_id_locked(study: Study) -> str:
    """Return why the study's Prolific study ID can no longer change ("" while it can).

    Once participants came in, or the Prolific study left its draft state, the ID is what
    their submissions, payments and webhooks are tied to.
    """
    if study.participants.exists():
        return "participants have started"
    state = ProlificStudyState.objects.filter(study=study).first()
    if state is not None and state.status and state.status.upper() != "UNPUBLISHED":
        return f"the Prolific study has been published (status {state.status})"
    if ProlificSubmission.objects.filter(study=study).exists():
        return "Prolific has submissions for it"
    return ""


def prolific_id_refusal(*, study: Study, new_id: str, previous: str) -> None:
    """Raise ValidationError when the study may not take `new_id` instead of `previous`.

    Refused: changing (or clearing) a locked ID, and an ID another study holds or has
    claimed (unless that study is the same owner's and no longer holds it: the owner moves
    it). Asks nothing of Prolific, so it runs before the other fields are validated.
    """
    if new_id == previous:
        return
    if previous:
        locked = prolific_id_locked(study)
        if locked:
            raise ValidationError(
                {
                    "prolific_study_id": f"The Prolific study ID cannot change: {locked}. "
                    "Make a new study (clone) for another Prolific study."
                }
            )
    if not new_id:
        return
    if Study.objects.filter(prolific_study_id=new_id).exclude(pk=study.pk).exists():
        raise ValidationError({"prolific_study_id": HELD_ELSEWHERE})
    claim = approved_claim(new_id)
    if claim is None or claim.study_id == study.pk:
        return
    if study.owner_id is None or claim.study.owner_id != study.owner_id:
        raise ValidationError({"prolific_study_id": CLAIMED_ELSEWHERE})


def prolific_id_settle(
    *,
    study: Study,
    new_id: str,
    previous: str,
    verify: Callable[[str], Any],
) -> str:
    """Return the Prolific study ID the study may hold now that `new_id` is asked for.

    Refuses what `prolific_id_refusal` refuses. An ID claimed for this study (or for another
    study of the same owner, which then gives it up) is held at once; an ID nobody claimed
    is checked with Prolific (`verify`) and asked for: a claim awaiting a site
    administrator's approval is recorded, and the study keeps `previous` until then.
    """
    prolific_id_refusal(study=study, new_id=new_id, previous=previous)
    if new_id == previous or not new_id:
        return new_id  # unchanged, or cleared (the claim keeps it reserved for this study)
    claim = approved_claim(new_id)
    if claim is not None:
        if claim.study_id != study.pk:  # the owner moves their cleared ID
            ProlificStudyClaim.objects.filter(pk=claim.pk).update(study=study)
        return new_id
    verify(new_id)
    ProlificStudyClaim.objects.get_or_create(
        prolific_study_id=new_id,
        study=study,
        defaults={"claimed_by": study.owner, "via": ProlificStudyClaim.Via.MANUAL},
    )
    return previous


def claim_draft(*, study: Study, prolific_study_id: str, user: Any = None) -> ProlificStudyClaim:
    """Claim the ID of a draft the platform just created for `study` (approved at once)."""
    claim, _ = ProlificStudyClaim.objects.update_or_create(
        prolific_study_id=prolific_study_id,
        study=study,
        defaults={
            "claimed_by": user if user is not None and user.is_authenticated else study.owner,
            "via": ProlificStudyClaim.Via.DRAFT,
            "approved_at": timezone.now(),
        },
    )
    return claim


def claim_approve(*, claim: ProlificStudyClaim, by: Any) -> ProlificStudyClaim:
    """Approve a claim typed in by hand: its study then holds the ID (a site administrator).

    Refused when another study owns or holds the ID, or the claim's study holds another ID
    it can no longer change. Other requests for the same ID are refused with it.
    """
    if not (by is not None and by.is_active and (by.is_staff or by.is_superuser)):
        raise ValidationError("Only a site administrator approves Prolific study claims.")
    with transaction.atomic():
        # Every request for this ID, locked in one order: two approvals at once (two admin
        # tabs) run one after the other instead of deadlocking on each other's rows.
        requests = list(
            ProlificStudyClaim.objects.select_for_update()
            .filter(prolific_study_id=claim.prolific_study_id)
            .order_by("pk")
        )
        claim = next((c for c in requests if c.pk == claim.pk), None)
        if claim is None:  # another request for the ID was approved meanwhile (or refused)
            raise ValidationError(CLAIMED_ELSEWHERE)
        if claim.approved:
            return claim
        study = Study.objects.select_for_update().get(pk=claim.study_id)
        owner = approved_claim(claim.prolific_study_id)
        holder = Study.objects.filter(prolific_study_id=claim.prolific_study_id).exclude(
            pk=study.pk
        )
        if owner is not None or holder.exists():
            raise ValidationError(CLAIMED_ELSEWHERE)
        if study.prolific_study_id and prolific_id_locked(study):
            raise ValidationError(
                f"Study {study.slug} holds Prolific study {study.prolific_study_id} and can no "
                "longer change it."
            )
        try:
            with transaction.atomic():
                ProlificStudyClaim.objects.filter(pk=claim.pk).update(
                    approved_at=timezone.now(), approved_by=by
                )
                Study.objects.filter(pk=study.pk).update(prolific_study_id=claim.prolific_study_id)
        except IntegrityError:  # approved elsewhere at this moment
            raise ValidationError(CLAIMED_ELSEWHERE) from None
        ProlificStudyClaim.objects.filter(
            prolific_study_id=claim.prolific_study_id, approved_at__isnull=True
        ).delete()
    claim.refresh_from_db()
    return claim


def claim_refuse(*, claim: ProlificStudyClaim, by: Any) -> None:
    """Refuse (delete) a claim awaiting approval (a site administrator)."""
    if not (by is not None and by.is_active and (by.is_staff or by.is_superuser)):
        raise ValidationError("Only a site administrator refuses Prolific study claims.")
    ProlificStudyClaim.objects.filter(pk=claim.pk, approved_at__isnull=True).delete()

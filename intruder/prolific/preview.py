"""What a Prolific action will send, shown to the researcher before it is sent.

Every action that spends money or changes what participants see (the draft, the study's
transitions, approvals, rejections, bonuses) is planned here first: the exact requests
(method, the API base and path, the body), the facts that matter in words (places, reward
and bonus totals with the currency, device rules), and a digest of the requests. The page
shows the plan; the confirmation carries the digest back, and the action is sent only if
the plan made again at that moment has the same digest (otherwise the new plan is shown).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from intruder.evidence.selectors import participant_flag_summary
from intruder.models import Participant, Study
from intruder.prolific.bonuses import BonusCandidate, BonusSelection
from intruder.prolific.client import StudyDraft, bonus_csv
from intruder.prolific.models import ProlificStudyState, ProlificSubmission
from intruder.prolific.services import TRANSITIONS, not_completed

TRANSITION_WORDS = {
    "publish": "Publish: Prolific starts showing the study to eligible participants",
    "pause": "Pause: no new participants can start; those in progress continue",
    "resume": "Resume: new participants can start again",
    "stop": "Stop: the study ends for good; it cannot be resumed",
}
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
CURRENCY_MINOR = {"GBP": "pence", "USD": "cents", "EUR": "cents"}


def api_base() -> str:
    """Return the Prolific API base the server talks to."""
    return settings.PROLIFIC_API_URL


def is_sandbox() -> bool:
    """Whether the API base is on loopback: the sandbox (Prolific itself never is)."""
    return (urlsplit(api_base()).hostname or "") in LOOPBACK_HOSTS


def currency() -> str:
    """Return the workspace currency's code (PROLIFIC_CURRENCY, GBP by default)."""
    return settings.PROLIFIC_CURRENCY


def money(major: Decimal) -> str:
    """Return an amount in major units with the currency, e.g. "GBP 1.50"."""
    return f"{currency()} {major.quantize(Decimal('0.01'))}"


def money_minor(minor: int) -> str:
    """Return an amount in minor units as Prolific takes it, e.g. "GBP 1.50 (150 pence)"."""
    unit = CURRENCY_MINOR.get(currency(), "minor units")
    return f"{money(Decimal(minor) / 100)} ({minor} {unit})"


@dataclass(frozen=True)
class Request:
    """One request as the client will send it."""

    method: str
    path: str
    body: dict[str, Any] | None = None

    @property
    def url(self) -> str:
        return api_base().rstrip("/") + "/" + self.path.lstrip("/")

    @property
    def body_text(self) -> str:
        return json.dumps(self.body, indent=2, sort_keys=True) if self.body is not None else ""


@dataclass(frozen=True)
class Plan:
    """What an action will send, in requests and in words, for the researcher to confirm."""

    title: str
    requests: tuple[Request, ...]
    facts: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    # A bonus's preview: everyone with an identified judgment, paid or not and why.
    candidates: tuple[BonusCandidate, ...] = ()

    @property
    def digest(self) -> str:
        """A digest of the requests: the confirmation must match the plan made again."""
        data = [[r.method, r.url, r.body] for r in self.requests]
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    @property
    def base(self) -> str:
        return api_base()

    @property
    def sandbox(self) -> bool:
        return is_sandbox()


def draft_plan(draft: StudyDraft) -> Plan:
    """Plan creating the Prolific draft (nothing is spent until it is published)."""
    devices = ", ".join(draft.device_compatibility) or "any device"
    facts = (
        ("Name shown to participants", draft.name),
        ("Description shown to participants", draft.description),
        ("Internal name (researchers only)", draft.internal_name),
        ("Study URL", draft.external_study_url),
        ("Completion code", draft.completion_code),
        ("On completion", draft.completion_action.replace("_", " ").lower()),
        ("Places", str(draft.total_available_places)),
        ("Reward per participant", money_minor(draft.reward)),
        (
            "Rewards in total when every place is filled",
            f"{money_minor(draft.reward * draft.total_available_places)}, before Prolific's "
            "fee and VAT",
        ),
        ("Estimated time", f"{draft.estimated_completion_time} min"),
        ("Devices allowed", devices),
    )
    return Plan(
        title="Create the Prolific draft",
        requests=(Request("POST", "studies/", draft.payload()),),
        facts=facts,
    )


def transition_plan(study: Study, action: str, state: ProlificStudyState | None) -> Plan:
    """Plan one transition of the study (the client's body, Prolific's action name)."""
    facts: list[tuple[str, str]] = [
        ("Prolific study", study.prolific_study_id),
        ("Status now (last known)", (state.status if state else "") or "unknown"),
        ("What happens", TRANSITION_WORDS[action]),
    ]
    if action == "publish" and state is not None and state.places:
        facts += [
            ("Places", str(state.places)),
            ("Reward per participant", money_minor(state.reward_minor)),
            (
                "Rewards in total when every place is filled",
                f"{money_minor(state.reward_minor * state.places)}, before Prolific's fee and VAT",
            ),
        ]
    body = {"action": TRANSITIONS[action]}
    path = f"studies/{study.prolific_study_id}/transition/"
    return Plan(
        title=f"{action.capitalize()} the Prolific study",
        requests=(Request("POST", path, body),),
        facts=tuple(facts),
    )


def review_plan(
    study: Study, kind: str, pids: list[str], reason: str, category: str, override: str
) -> Plan:
    """Plan approvals or rejections: one request per submission, with the reward at stake."""
    subs = dict(
        ProlificSubmission.objects.filter(study=study, prolific_pid__in=pids).values_list(
            "prolific_pid", "submission_id"
        )
    )
    requests = []
    for pid in sorted(set(pids)):
        body: dict[str, Any] = {"action": "APPROVE"}
        if kind == "reject":
            body = {"action": "REJECT", "message": reason, "rejection_category": category}
        submission = subs.get(pid, f"<no submission of {pid} known: sync first>")
        requests.append(Request("POST", f"submissions/{submission}/transition/", body))
    state = ProlificStudyState.objects.filter(study=study).first()
    facts: list[tuple[str, str]] = [
        ("Participants", str(len(requests))),
        ("What happens", "approved: Prolific pays their reward" if kind == "approve" else
         "rejected: not paid; the message is shown to them"),
    ]  # fmt: skip
    if kind == "approve" and state is not None and state.reward_minor:
        facts.append(("Rewards paid", money_minor(state.reward_minor * len(requests))))
    warnings = []
    if kind == "approve":
        summary = participant_flag_summary(study)
        pks = dict(
            Participant.objects.filter(study=study, prolific_pid__in=pids).values_list(
                "prolific_pid", "pk"
            )
        )
        for pid in sorted(set(pids)):
            flags = summary.get(pks.get(pid, -1))
            if flags is not None and flags.n_answers and flags.n_excluded == flags.n_answers:
                warnings.append(
                    f"Every answer of {pid} is excluded by the study's rules "
                    f"({flags.n_excluded} of {flags.n_answers}): approving pays their reward "
                    "for answers the analysis leaves out. Reject instead, or overrule the flags "
                    "first if they are false alarms."
                )
        incomplete = not_completed(study, pids)
        if incomplete:
            warnings.append(
                f"Not completed here: {', '.join(incomplete)}. Approved only with your reason: "
                f"“{override.strip()}”."
            )
    return Plan(
        title="Approve submissions" if kind == "approve" else "Reject submissions",
        requests=tuple(requests),
        facts=tuple(facts),
        warnings=tuple(warnings),
    )


def bonus_plan(study: Study, selection: BonusSelection, label: str, per: Decimal) -> Plan:
    """Plan a bonus: the set-up request (the amounts in major units) and its pay request,
    with everyone who has an identified judgment listed: paid for which judgments, or why not.
    """
    amounts = selection.amounts
    rows = [(pid, float(amount)) for pid, amount in sorted(amounts.items())]
    body = {"study_id": study.prolific_study_id, "csv_bonuses": bonus_csv(rows)}
    total = sum(amounts.values(), Decimal("0"))
    left_out = [c for c in selection.candidates if c.prolific_pid not in amounts]
    warnings = [
        f"Paid outside the default rule, by your choice: {pid} ({reason})."
        for pid, reason in sorted(selection.overrides.items())
    ]
    return Plan(
        title=f"Pay the bonus “{label}”",
        requests=(
            Request("POST", "submissions/bonus-payments/", body),
            Request("POST", "bulk-bonus-payments/<id of the set-up bonus>/pay/"),
        ),
        facts=(
            ("Participants paid", str(len(amounts))),
            ("Per identified text", money(per)),
            ("Bonuses in total", f"{money(total)}, before Prolific's fee and VAT"),
            (
                "Who is paid by default",
                "submissions of this Prolific study who completed here, per identified answer "
                "the study's exclusion rules keep and no other bonus label paid",
            ),
            ("Not paid", str(len(left_out))),
            ("Label", f"{label} (each participant is paid once per label, in any case)"),
        ),
        warnings=tuple(warnings),
        candidates=tuple(selection.candidates),
    )

"""The demo's human-vs-machine side: invented intruder judgments, a risk check and a report.

`judgments.jsonl` holds answers of three invented demo intruders (DEMOJUDGE01-03) to the
released texts, written for this project so the report has a human side from the first
minute. They are stored as simulated participants (`Participant.simulated`), which every
page and export that uses them labels as such. Their timings are drawn (seeded) from a
log-normal with a median of SIMULATED_MEDIAN_S seconds per text (a plausible reading and
typing time; no real data behind it), one text after another with a short pause.
The attack runs use the cheap attacks only, so the demo stays quick to start: a risk check,
a knowledge-budget run (b = 1, the attacker knows each candidate as well as one writer does,
the retrieval attacks) and the report run of every description outside the fold, so that the
report's knowledge-budget ladder shows from the first start.

The demo intruder study asks the familiarity question; the simulated intruders' answers are
simulated too (`simulate_familiarity`, stored with `simulated=True`): a judge who named a
person had heard of them, the others had with probability SIMULATED_HEARD_OF (seeded).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from intruder.models import AnonymizedText, Assignment, Judgment, Participant, Study
from intruder.risk import attack_runs
from intruder.risk.models import AttackRun
from intruder.selectors.persons import study_persons_with_ids
from intruder.services import jobs
from intruder.services.anonymization import MODEL_METHOD
from intruder.services.familiarity import (
    familiarity_due,
    familiarity_list,
    familiarity_record,
)
from model_runtime.guess_scoring import score_guess
from research_data.json_lines import read_json_lines

SIMULATED_MEDIAN_S = 70.0
SIMULATED_SIGMA = 0.5
SIMULATED_PAUSE_S = 8.0
SIMULATED_HEARD_OF = 0.4
# The demo's knowledge-budget run: the attacker knows each candidate through one description.
DEMO_BUDGET = 1


def simulated_durations(pid: str, count: int) -> list[float]:
    """Return `count` seconds per text for one simulated judge (seeded by its PID)."""
    import zlib

    import numpy as np

    rng = np.random.default_rng(zlib.crc32(pid.encode()))
    return [
        float(v) for v in rng.lognormal(np.log(SIMULATED_MEDIAN_S), SIMULATED_SIGMA, size=count)
    ]


def load_demo_judgments(study: Study, path: Path) -> int:
    """Store the invented judgments (JSON lines at `path`) once; return how many were new."""
    rows = [row for _, row in read_json_lines(path)]
    texts = {
        t.description.external_id: t
        for t in AnonymizedText.objects.filter(
            description__study=study, method=MODEL_METHOD, status=AnonymizedText.Status.RELEASED
        ).select_related("description__target")
    }
    created = 0
    now = timezone.now()
    pids = sorted({row["pid"] for row in rows})
    durations = {pid: simulated_durations(pid, len(rows)) for pid in pids}
    # Each judge worked through their texts one after another, ending about now.
    clock = {
        pid: now - timedelta(seconds=sum(durations[pid]) + SIMULATED_PAUSE_S * len(rows))
        for pid in pids
    }
    with transaction.atomic():
        for pid in pids:
            Participant.objects.update_or_create(
                study=study,
                prolific_pid=pid,
                defaults={"simulated": True},
                create_defaults={
                    "status": Participant.Status.COMPLETED,
                    "consented_at": clock[pid],
                    "simulated": True,
                },
            )
            intruders = {p.prolific_pid: p for p in study.participants.all()}
        persons, person_ids = study_persons_with_ids(study)
        positions: dict[str, int] = {}
        for row in rows:
            text = texts.get(row["text"])
            intruder = intruders[row["pid"]]
            if text is None or Judgment.objects.filter(participant=intruder, text=text).exists():
                continue
            target = text.description.target
            score = score_guess(
                target.name,
                row.get("guessed_name", ""),
                aliases=target.aliases,
                threshold=study.identification_threshold,
                others=persons,
                true_key=target.key,
                rule=study.identification_rule,
            )
            if row["pid"] not in positions:
                positions[row["pid"]] = 1000 + intruder.assignments.count()
            positions[row["pid"]] += 1
            slot = text.assignments.filter(status__in=["active", "completed"]).count() + 1
            seconds = durations[row["pid"]][positions[row["pid"]] % len(rows)]
            shown_at = clock[row["pid"]] + timedelta(seconds=SIMULATED_PAUSE_S)
            completed_at = shown_at + timedelta(seconds=seconds)
            clock[row["pid"]] = completed_at
            assignment = Assignment.objects.create(
                participant=intruder,
                text=text,
                position=positions[row["pid"]],  # far after the 5 items a player gets
                slot=slot,
                status=Assignment.Status.COMPLETED,
                shown_at=shown_at,
                completed_at=completed_at,
            )
            Judgment.objects.create(
                assignment=assignment,
                participant=intruder,
                text=text,
                self_identified=row["self_identified"],
                guessed_name=row.get("guessed_name", ""),
                revealing_text=row.get("revealing_text", ""),
                other_knowledge=row.get("other_knowledge", ""),
                time_spent_ms=round(1000 * seconds),
                cosine=score.cosine,
                identified=score.identified,
                matched_alias=score.matched_alias,
                token_set_ratio=score.token_set_ratio,
                surname_match=score.surname_match,
                surname_agrees=score.surname_agrees,
                other_cosine=score.other_cosine,
                other_person_id=person_ids.get(score.other_key),
                named_other=score.named_other,
            )
            created += 1
    simulate_familiarity(study)
    return created


def simulate_familiarity(study: Study) -> int:
    """Store simulated familiarity answers of the simulated intruders; return how many.

    Each answers the list a person would see (the famous persons they judged among decoys)
    through the participants' own service.
    """
    import zlib

    import numpy as np

    created = 0
    for intruder in study.participants.filter(simulated=True).order_by("prolific_pid"):
        if not familiarity_due(intruder):
            continue
        named = set(
            intruder.judgments.filter(identified=True).values_list(
                "text__description__target_id", flat=True
            )
        )
        rng = np.random.default_rng(zlib.crc32(intruder.prolific_pid.encode()))
        items = familiarity_list(intruder)
        ticked = {
            place
            for place, item in enumerate(items)
            if (item.target is not None and item.target.pk in named)
            or bool(rng.random() < SIMULATED_HEARD_OF)
        }
        familiarity_record(
            participant=intruder, ticked=ticked, none_of_these=not ticked, simulated=True
        )
        created += len(items)
    return created


def _finished_or_run(
    study: Study, purpose: str, start: Any, echo: Any = None, budget: int | None = None
) -> AttackRun:
    """Return the study's finished run of `purpose` (at knowledge budget `budget`, None =
    without one); start (or resume) and run one here if none."""
    run = (
        study.attack_runs.filter(purpose=purpose, knowledge_budget=budget)
        .select_related("job")
        .first()
    )
    if run is None:
        run = start()
    job = run.job
    if job.status == job.Status.FAILED:
        job = jobs.job_retry(job=job)
    if job.status == job.Status.QUEUED:
        jobs.job_execute(job.pk, echo=echo)
    run.refresh_from_db()
    return run


def run_demo_attacks(
    study: Study,
    owner: Any,
    *,
    attacks: tuple[str, ...] = attack_runs.CHEAP_ATTACKS,
    config: dict[str, Any] | None = None,
    echo: Any = None,
) -> tuple[AttackRun, AttackRun]:
    """Leave the study with a finished risk check, a finished knowledge-budget run (b = 1, the
    cheap retrieval attacks, the served texts only) and a finished report run (cheap attacks);
    return the check and the report run, which the report shows by default (the newest).

    `echo(done, total, message)` receives the runs' progress.
    """
    check = _finished_or_run(
        study,
        AttackRun.Purpose.RISK_CHECK,
        lambda: attack_runs.risk_check_start(
            study=study, user=owner, attacks=attacks, config=config
        ),
        echo,
    )
    retrieval = [a for a in attacks if a in attack_runs.REUSABLE_ATTACKS]
    if retrieval:
        # Before the report run, so that the report run stays the newest (the page's default).
        _finished_or_run(
            study,
            AttackRun.Purpose.REPORT,
            lambda: attack_runs.attack_run_start(
                study=study,
                user=owner,
                attacks=retrieval,
                methods=[MODEL_METHOD],
                config=config,
                knowledge_budget=DEMO_BUDGET,
            ),
            echo,
            budget=DEMO_BUDGET,
        )
    report = _finished_or_run(
        study,
        AttackRun.Purpose.REPORT,
        lambda: attack_runs.attack_run_start(
            study=study,
            user=owner,
            attacks=attacks,
            methods=[MODEL_METHOD, attack_runs.CLEAR, attack_runs.SPACY_NER],
            config=config,
        ),
        echo,
    )
    return check, report

"""Reads for the risk report: attack results and human per-text results of a study as frames."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Count, QuerySet

from intruder.analysis.frames import TARGET_COLUMNS, judged_texts, with_rule
from intruder.analysis.intervals import Rate, wilson
from intruder.analysis.per_text import per_text
from intruder.analysis.selectors import simulated_note, study_judgments, study_texts
from intruder.llm_intruder.selectors import open_world_llm_results
from intruder.models import (
    AnonymizedText,
    Description,
    FamiliarityAnswer,
    FamiliarityDecoyAnswer,
    Participant,
    Study,
)
from intruder.risk import predicted
from intruder.risk.familiarity import familiarity_split, measured_familiarity
from intruder.risk.methods import method_label
from intruder.risk.models import AttackResult, AttackRun
from intruder.risk.predicted import load_calibration
from intruder.risk.provenance import provenance
from intruder.risk.report.build import build_report
from intruder.risk.report.summary import KNOWLEDGE_NOTE, nearest_budget_sentence
from intruder.risk.report.tables import (
    RISK_TABLE_TITLES,
    RiskReport,
    knowledge_budget_predicted_table,
    knowledge_budget_table,
    nearest_budget,
    open_world_table,
)
from model_runtime.guess_scoring import IDENTIFICATION_RULES

RESULT_COLUMNS = [
    "description_id",
    "anonymized_text_id",
    "method",
    "attack",
    "fold",
    "predicted_key",
    "true_rank",
    "true_prob",
    "masked_share",
    "hit_share",
    "target_key",
    "target_name",
    "group",
    "external_id",
]


def run_finished(run: AttackRun) -> bool:
    """Whether every fold of the run is in: its summary holds the TRIR table (the reports read
    this, not the job's status, so a run's job can store its report before it ends)."""
    return "trir" in (run.summary or {})


def finished_runs(runs: QuerySet[AttackRun]) -> QuerySet[AttackRun]:
    """The finished runs among `runs` (as `run_finished`)."""
    return runs.filter(summary__has_key="trir")


def latest_run(study: Study, purpose: str = AttackRun.Purpose.REPORT) -> AttackRun | None:
    """Return the study's newest finished run of `purpose`, else its newest run of it."""
    runs = study.attack_runs.filter(purpose=purpose).select_related("job")
    finished = runs.filter(job__status="succeeded").first()
    return finished or runs.first()


def run_results(run: AttackRun) -> pd.DataFrame:
    """Return one row per stored result of `run`."""
    rows = [
        {
            "description_id": r.description_id,
            "anonymized_text_id": r.anonymized_text_id,
            "method": r.method,
            "attack": r.attack,
            "fold": r.fold,
            "predicted_key": r.predicted_key,
            "true_rank": r.true_rank,
            "true_prob": r.true_prob,
            "masked_share": r.masked_share,
            "hit_share": r.hit_share,
            "target_key": r.description.target.key,
            "target_name": r.description.target.name,
            "group": r.description.target.group,
            "external_id": r.description.external_id or f"description-{r.description_id}",
        }
        for r in AttackResult.objects.filter(run=run)
        .select_related("description__target")
        .order_by("pk")
    ]
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    frame["true_rank"] = frame["true_rank"].astype("Float64")
    frame["true_prob"] = frame["true_prob"].astype(float)
    frame["masked_share"] = frame["masked_share"].astype(float)
    frame["hit_share"] = frame["hit_share"].astype(float)
    return frame


def human_texts(study: Study, judgments: pd.DataFrame | None = None) -> pd.DataFrame:
    """Return the per-text human results of the study's judged texts, with their method.

    `judgments` (rows of `study_judgments`) lets a caller report on a subset, e.g. without
    flagged judgments; by default every judgment of the study counts.
    """
    texts = study_texts(study)
    judgments = study_judgments(study) if judgments is None else judgments
    if texts.empty or judgments.empty:
        return pd.DataFrame()
    table = per_text(judgments, texts, study.identification_threshold)
    methods = dict(
        AnonymizedText.objects.filter(pk__in=table["text_id"].tolist()).values_list("pk", "method")
    )
    descriptions = texts.set_index("text_id")["description_id"]
    table["method"] = table["text_id"].map(methods)
    table["description_id"] = table["text_id"].map(descriptions)
    return table


def human_side(study: Study) -> dict[str, Any]:
    """Return what the study's intruders had and were: the human threat model's facts."""
    intruders = Participant.objects.filter(study=study, judgments__isnull=False).distinct()
    simulated = intruders.filter(simulated=True).count()
    return {
        "instructions": study.instructions_text.strip() or "the platform's default instructions",
        "intruders": intruders.count(),
        "simulated_intruders": simulated,
        "judgments_per_text_planned": study.judgments_per_text,
        "population": study.intruder_population.strip(),
        "recruitment": study.intruder_recruitment.strip(),
        "familiarity": study.intruder_familiarity.strip(),
    }


def machine_side(run: AttackRun) -> dict[str, Any]:
    """Return the candidate set and background of a run: the machine threat model's facts."""
    side = _background_side(run)
    distractors = run.distractor_documents or {}
    side["study_candidates"] = side["candidates"]
    side["distractors"] = len(distractors)
    side["distractors_dropped_as_study_persons"] = (run.summary or {}).get(
        "distractors_dropped", []
    )
    side["candidates"] += len(distractors)
    if not distractors:
        side["world"] = "closed: every attack chooses among the study's persons only"
    else:
        side["world"] = (
            f"closed, widened: the study's {side['study_candidates']} persons and "
            f"{len(distractors)} distractor persons who are not in the study"
        )
    return side


def _background_side(run: AttackRun) -> dict[str, Any]:
    if run.background == AttackRun.Background.UPLOADED:
        documents = run.background_documents or {}
        sizes = [len(str(text).split()) for text in documents.values()]
        return {
            "candidates": len(documents),
            "background_source": "uploaded documents, one set per candidate person",
            "background_words_per_person_median": float(np.median(sizes)) if sizes else None,
        }
    per_person = list(
        Description.objects.filter(study=run.study)
        .values("target_id")
        .annotate(n=Count("pk"))
        .values_list("n", flat=True)
    )
    share = (run.folds - 1) / run.folds if run.folds else 1.0
    if run.knowledge_budget is not None:
        return budget_side(run, per_person, share)
    return {
        "candidates": len(per_person),
        "background_source": f"the study's own original descriptions of each person, "
        f"cross-validated in {run.folds} folds (never the text's own, nor another text "
        "by the same writer about the same person)",
        "background_descriptions_per_person_median": float(np.median(per_person) * share)
        if per_person
        else None,
    }


def budget_side(run: AttackRun, per_person: list[int], share: float) -> dict[str, Any]:
    """Return the machine side of a knowledge-budget run: b descriptions per candidate."""
    b = run.knowledge_budget
    known = "1 writer does" if b == 1 else f"{b} writers do"
    median = float(np.median(per_person) * share) if per_person else None
    return {
        "candidates": len(per_person),
        "knowledge_budget": b,
        "budget_resamples": run.budget_resamples,
        "knowledge": f"the attacker knows each candidate as well as {known}",
        "background_source": f"{b} of the study's own original descriptions per person, drawn "
        f"at random in each of {run.budget_resamples} resamples of {run.folds} folds "
        "(never the text's own, nor another text by the same writer about the same person); "
        "a text counts as identified when its median rank over the resamples is 1",
        "background_descriptions_per_person_median": min(b, median) if median else None,
    }


def _add_open_world(report: RiskReport, run: AttackRun, texts: pd.DataFrame) -> None:
    """Add the ladder of the study's finished report runs (each run one N) to `report`."""
    method = report.settings.get("human_method")
    runs = [run] + [
        other
        for other in finished_runs(
            run.study.attack_runs.filter(purpose=AttackRun.Purpose.REPORT)
        ).exclude(pk=run.pk)[:10]
        if method in other.methods
    ]
    judged = None
    if not texts.empty:
        judged = set(texts.loc[texts["n_judgments"] > 0, "description_id"])
    table = open_world_table(
        [({**machine_side(r), "run": r.pk}, run_results(r)) for r in runs],
        method,
        judged,
        report.headline.get("human"),
    )
    if not table.empty:
        report.tables["open_world"] = table
        report.tables = {n: report.tables[n] for n in RISK_TABLE_TITLES if n in report.tables}


def _add_knowledge_ladder(report: RiskReport, run: AttackRun, texts: pd.DataFrame) -> None:
    """Add the study's finished cross-validated report runs side by side by knowledge budget."""
    method = report.settings.get("human_method")
    others = finished_runs(
        run.study.attack_runs.filter(
            purpose=AttackRun.Purpose.REPORT, background=AttackRun.Background.CROSS_VALIDATED
        )
    ).exclude(pk=run.pk)[:10]
    runs = [r for r in [run, *others] if method in r.methods and not r.distractor_documents]
    judged = None
    if not texts.empty:
        judged = set(texts.loc[texts["n_judgments"] > 0, "description_id"])
    sides = [({**machine_side(r), "run": r.pk}, run_results(r)) for r in runs]
    table = knowledge_budget_table(
        sides, method, judged, report.tables.get("rates_target"), report.headline.get("human")
    )
    if not table.empty:
        report.tables["knowledge_budget"] = table
        nearest = nearest_budget_sentence(nearest_budget(table), report.headline.get("human"))
        report.notes["knowledge_budget"] = KNOWLEDGE_NOTE + (f" {nearest}" if nearest else "")
        report.settings["knowledge_budget_nearest"] = nearest
    predicted = knowledge_budget_predicted_table(
        sides, method, judged, report.tables.get("rates_target")
    )
    if not predicted.empty:
        report.tables["knowledge_budget_predicted"] = predicted
        report.tables = {n: report.tables[n] for n in RISK_TABLE_TITLES if n in report.tables}


def run_report(
    run: AttackRun, *, human_method: str | None = None, judgments: pd.DataFrame | None = None
) -> RiskReport:
    """Build the human-vs-machine report of one attack run."""
    from django.conf import settings as django_settings

    study = run.study
    results = run_results(run)
    labels = {m: method_label(m) for m in run.methods}
    settings: dict[str, Any] = {
        "study": study.slug,
        "run": run.pk,
        "purpose": run.purpose,
        "attacks": run.attacks,
        "methods": run.methods,
        "background": run.background,
        "folds": run.folds if run.background == AttackRun.Background.CROSS_VALIDATED else None,
        "seed": run.seed,
        "knowledge_budget": run.knowledge_budget,
        "budget_resamples": run.budget_resamples if run.knowledge_budget else None,
        "identification_threshold": study.identification_threshold,
        "created_at": run.created_at.isoformat(),
        "finished": run_finished(run),
    }
    if judgments is None:
        judgments = study_judgments(study)
    texts = human_texts(study, judgments)
    # The same report without the judgments the study's exclusion rules drop (issue 20).
    kept = judgments[~judgments["excluded"].astype(bool)] if "excluded" in judgments else None
    kept_texts = human_texts(study, kept) if kept is not None else None
    # The same judgments under each other rule of a guess, for the sensitivity table.
    other_rules = [
        (other, human_texts(study, with_rule(judgments, other)))
        for other in IDENTIFICATION_RULES
        if other != study.identification_rule and len(judgments)
    ]
    human = human_side(study)
    machine = machine_side(run)
    answers = familiarity_answers(study)
    report = build_report(
        results,
        human_texts=texts,
        human_method=human_method,
        rule=study.identified_rule,
        settings=settings,
        labels=labels,
        human_side=human,
        machine_side=machine,
        provenance=provenance(
            model_dir=django_settings.INTRUDER_ANONYMIZER_MODEL or None,
            attack_config=run.config,
            seed=run.seed,
            folds=settings["folds"],
            threshold=study.identification_threshold,
            identified_rule=study.identified_rule,
            identification_rule=study.identification_rule,
            counts={
                "intruders": human["intruders"],
                "simulated_intruders": human["simulated_intruders"],
                "judgments": int(texts["n_judgments"].sum()) if not texts.empty else 0,
                "texts_judged": int((texts["n_judgments"] > 0).sum()) if not texts.empty else 0,
                "texts_attacked": int(results["description_id"].nunique()),
                "attack_results": len(results),
            },
        ),
        calibration=load_calibration(calibration_path(), candidates=machine["candidates"]),
        seed=run.seed,
        kept_texts=kept_texts,
        llm_rows=(open_world_llm_results(study) or {}).get("rows"),
        tpi=(run.summary or {}).get("tpi") or {},
        familiarity_split=familiarity_split(_judged_persons(study, judgments), answers),
        measured_familiarity=measured_familiarity(answers),
        familiarity_decoys=familiarity_decoys_ticked(study),
        guess_rule=study.identification_rule,
        other_guess_rules=other_rules,
    )
    note = simulated_note(study)
    if note:
        report.warnings.insert(0, note)
    if not results.empty:
        _add_open_world(report, run, texts)
        _add_knowledge_ladder(report, run, texts)
    if not run_finished(run):
        report.warnings.insert(
            0,
            f"The run has not finished: {run.results.count()} results stored so far; its job "
            "on the risk page says how far it is.",
        )
    return report


def familiarity_decoys_ticked(study: Study) -> Rate | None:
    """Return how many decoy names on the familiarity lists were ticked as heard of (None
    where no intruder answered): how readily intruders claim to know a famous name."""
    answers = FamiliarityDecoyAnswer.objects.filter(participant__study=study)
    n = answers.count()
    return wilson(answers.filter(heard_of=True).count(), n) if n else None


def familiarity_answers(study: Study) -> pd.DataFrame:
    """Return the study's familiarity answers: participant_id, target_key, heard_of, simulated."""
    rows = FamiliarityAnswer.objects.filter(target__study=study).values_list(
        "participant_id", "target__key", "heard_of", "simulated"
    )
    return pd.DataFrame(
        list(rows), columns=["participant_id", "target_key", "heard_of", "simulated"]
    )


def _judged_persons(study: Study, judgments: pd.DataFrame) -> pd.DataFrame:
    """Return the judgments with the person each judged text describes and `identified`
    under the study's threshold and rule of a guess (`analysis.frames.judged_texts`)."""
    if judgments.empty:
        return pd.DataFrame()
    judged = judged_texts(judgments, study_texts(study), study.identification_threshold)
    return judged[["text_id", "participant_id", "identified", *TARGET_COLUMNS]]


def calibration_path() -> Path:
    """Return the predicted-risk calibration the platform reads: a lab's refit
    (`INTRUDER_PREDICTED_CALIBRATION`, `manage.py fit_predicted_risk`), else the shipped one."""
    from django.conf import settings

    configured = getattr(settings, "INTRUDER_PREDICTED_CALIBRATION", "")
    return Path(configured) if configured else predicted.CALIBRATION_PATH

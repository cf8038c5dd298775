"""Reads for the analyses: build the tidy judgments and texts frames of a study.

Judgment -> Assignment/AnonymizedText -> Description -> TargetPerson, flattened into the two
frames `intruder.analysis.frames` describes. Judgments stored without scores (older rows, or
a changed scorer) are scored here in memory with `model_runtime.guess_scoring.score_guess`,
among the study's persons; nothing is written. Each row carries the study's identification
rule, which `intruder.analysis.frames.judged_texts` applies.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from django.db.models import Q

from intruder.analysis import report as analysis_report
from intruder.analysis.frames import JUDGMENT_COLUMNS, TEXT_COLUMNS
from intruder.evidence.selectors import answer_flag_status, study_rules
from intruder.models import AnonymizedText, Judgment, Participant, Study
from intruder.selectors.counts import count_by
from intruder.selectors.participant import intruder_text_pool
from intruder.selectors.persons import study_persons
from model_runtime.guess_scoring import score_guess


def study_texts(study: Study) -> pd.DataFrame:
    """Return one row per text of the study that intruders can see or have judged."""
    judged = Judgment.objects.filter(participant__study=study).values("text_id")
    texts = (
        AnonymizedText.objects.filter(
            Q(pk__in=intruder_text_pool(study=study).values("pk")) | Q(pk__in=judged)
        )
        .exclude(description__target__catch=True)  # catch trials are never in the rates
        .select_related("description__target")
        .order_by("pk")
    )
    rows = [
        {
            "text_id": text.pk,
            "description_id": text.description_id,
            "external_id": text.description.reference,
            "target_key": text.description.target.key,
            "target_name": text.description.target.name,
            "group": text.description.target.group,
            "original": text.description.text,
            "anonymized": text.text,
            "placeholders": sorted(
                {s["placeholder"] for s in text.spans or [] if s.get("placeholder")}
            ),
        }
        for text in texts
    ]
    return pd.DataFrame(rows, columns=list(TEXT_COLUMNS))


def study_judgments(study: Study) -> pd.DataFrame:
    """Return one row per judgment made in the study, scored (in memory where missing);
    catch trials' judgments (`evidence.catch_trials`) are left out.

    Besides the frame's columns: `flags` (codes, ";"-joined) and `excluded` (the study's
    exclusion rules or a review leave it out of the "without flagged" rates).
    """
    rules = study_rules(study)
    persons = study_persons(study)
    judgments = (
        Judgment.objects.filter(participant__study=study)
        .exclude(text__description__target__catch=True)  # catch trials: never in the rates
        .select_related("text__description__target")
        .order_by("pk")
    )
    rows = []
    for judgment in judgments:
        status = answer_flag_status(judgment, rules)
        row: dict[str, Any] = {
            "judgment_id": judgment.pk,
            "text_id": judgment.text_id,
            "participant_id": judgment.participant_id,
            "self_identified": judgment.self_identified,
            "guessed_name": judgment.guessed_name,
            "revealing_text": judgment.revealing_text,
            "other_knowledge": judgment.other_knowledge,
            "cosine": judgment.cosine,
            "identified": judgment.identified,
            "token_set_ratio": judgment.token_set_ratio,
            "surname_match": judgment.surname_match,
            "other_cosine": judgment.other_cosine,
            "surname_agrees": judgment.surname_agrees,
            "identification_rule": study.identification_rule,
            "flags": ";".join(status.flag_codes),
            "excluded": status.excluded,
        }
        if (
            judgment.cosine is None
            or judgment.other_cosine is None
            or (judgment.surname_agrees is None and judgment.guessed_name)
        ):
            target = judgment.text.description.target
            score = score_guess(
                target.name,
                judgment.guessed_name,
                aliases=target.aliases or (),
                threshold=study.identification_threshold,
                others=persons,
                true_key=target.key,
                rule=study.identification_rule,
            )
            row.update(
                cosine=score.cosine if judgment.cosine is None else judgment.cosine,
                identified=score.identified,
                token_set_ratio=score.token_set_ratio,
                surname_match=score.surname_match,
                other_cosine=score.other_cosine,
                surname_agrees=score.surname_agrees,
            )
        rows.append(row)
    return pd.DataFrame(rows, columns=[*JUDGMENT_COLUMNS, "flags", "excluded"])


def missing_texts_note(study: Study) -> str:
    """Say what a study without analysable texts holds and what it still needs."""
    descriptions = study.descriptions.count()
    by_status = count_by(AnonymizedText.objects.filter(description__study=study), "status")
    anonymized = sum(by_status.values())
    if not descriptions:
        return (
            "The study has no descriptions yet: import them, or take them from a collection "
            "study (study page), then anonymize, review and release them."
        )
    if not anonymized:
        return (
            f"The study has {descriptions} description(s) but no anonymized text: run "
            "“Anonymize descriptions” on the study page, then review and release them."
        )
    drafts = by_status.get(AnonymizedText.Status.DRAFT, 0)
    withdrawn = by_status.get(AnonymizedText.Status.WITHDRAWN, 0)
    released = by_status.get(AnonymizedText.Status.RELEASED, 0)
    shown = f" in the groups shown ({', '.join(study.groups)})" if study.groups else ""
    return (
        f"The study has {descriptions} description(s) and {anonymized} anonymized text(s): "
        f"{drafts} draft(s), {withdrawn} withdrawn, {released} released, but no released "
        f"text{shown} and no judgment yet. Release texts on the review page; analyses use "
        "released or judged texts."
    )


def study_report(
    study: Study,
    *,
    include_construct_loss: bool = False,
    threshold: float | None = None,
    nlp: Any | None = None,
) -> analysis_report.Report:
    """Run every analysis of `study` at its identification threshold (or `threshold`)."""
    texts = study_texts(study)
    report = analysis_report.run_all(
        study_judgments(study),
        texts,
        study.identification_threshold if threshold is None else threshold,
        include_construct_loss=include_construct_loss and not texts.empty,
        nlp=nlp,
    )
    if texts.empty:
        report.warnings = [missing_texts_note(study)]
    note = simulated_note(study)
    if note:
        report.warnings = [note, *report.warnings]
    return report


def simulated_note(study: Study) -> str:
    """Return the label of simulated (demo) intruders' judgments, or '' where there are none."""
    judges = Participant.objects.filter(study=study, judgments__isnull=False).distinct()
    simulated = judges.filter(simulated=True).count()
    if not simulated:
        return ""
    return (
        f"Simulated human data: {simulated} of the {judges.count()} intruders are invented by "
        "the demo, not people. Their judgments show how the analyses work and say nothing "
        "about human risk."
    )

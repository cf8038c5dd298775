"""Demo studies built from data written for this project (invented persons only).

`load_demo` is idempotent: it creates what is missing and leaves the rest as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from intruder.analysis.page import ANALYSIS_PAGE
from intruder.annotation.pages import AGREEMENT_PAGE
from intruder.auth import DEMO_PASSWORD
from intruder.exchange import imports
from intruder.models import AnonymizedText, Job, Study
from intruder.reports.refresh import report_prepare
from intruder.services import anonymization, jobs, review, studies

# A job's progress as it runs: echo(done, total, message).
Echo = Callable[[int, int, str], None]

DEMO_DIR = Path(__file__).resolve().parent
DEMO_JUDGMENTS = "judgments.jsonl"  # invented intruder answers (intruder.risk.demo loads them)
RESEARCHER_USERNAME = "researcher"
COLLECTION_SLUG = "demo-collection"
INTRUDER_SLUG = "demo-intruder"

CONSENT = (
    "This is a demonstration of a research study on text anonymization. You will be asked "
    "to write short descriptions of people (or, in the intruder test, to read anonymized "
    "descriptions and guess who they describe). Taking part is voluntary; you may stop at "
    "any time. We store your answers and your Prolific ID, nothing else."
)
WRITER_INSTRUCTIONS = (
    "Describe each person as if to someone who has never heard of them, in your own words, "
    "using everything you know or can read on the page: job, family, places, appearance, "
    "habits. Write at least 500 characters for each person."
)
INTRUDER_INSTRUCTIONS = (
    "Play an adversary: each text describes a real or invented person, with names and other "
    "details replaced by placeholders such as PERSON_FIRSTNAME_1. Try to work out who it is. "
    "Say whether you could identify the person, who it is, and what gave it away."
)
DEBRIEF = (
    "Thank you! This demo study tests whether anonymized person descriptions can still be "
    "re-identified by people. All persons in it are invented."
)


@dataclass
class DemoLoad:
    """What `load_demo` created or found."""

    username: str
    password: str
    collection: Study
    intruder: Study
    imported: dict[str, Any] = field(default_factory=dict)
    anonymization_job: Job | None = None
    released: int = 0
    held_back: list[int] = field(default_factory=list)
    judgments_created: int = 0
    risk_check: Any = None
    risk_report: Any = None
    annotation: Any = None


def _researcher(password: str) -> Any:
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(
        username=RESEARCHER_USERNAME, defaults={"email": "researcher@example.org"}
    )
    user.is_staff = True
    user.is_superuser = True
    # Set only when it differs: a new hash (a fresh salt) ends every session, so resetting
    # the same password on each restart logged the researcher out every time.
    if not user.check_password(password):
        user.set_password(password)
    user.save()
    return user


def _study(owner: Any, slug: str, **settings: Any) -> Study:
    study = Study.objects.filter(slug=slug).first()
    return study or studies.study_create(owner=owner, slug=slug, **settings)


def _import_once(study: Study, filename: str, already: bool) -> dict[str, int]:
    if already:
        return {}
    content = (DEMO_DIR / filename).read_bytes()
    return imports.import_study_data(study=study, content=content, fmt="jsonl").as_dict()


def _anonymize(study: Study, owner: Any, echo: Echo | None = None) -> Job | None:
    """Run the study's anonymization job here: retry an earlier failed one, else a new one."""
    earlier = study.jobs.filter(kind=Job.Kind.ANONYMIZE_STUDY).order_by("-created_at").first()
    if earlier is not None and earlier.status == Job.Status.FAILED:
        job = jobs.job_retry(job=earlier)
    else:  # the active one (one per study and kind), else a new one
        job, _ = anonymization.anonymization_job_start(study=study, user=owner)
    # None when a worker claimed it meanwhile: it finishes there.
    return jobs.job_execute(job.pk, echo=echo)


def load_demo(
    *,
    password: str = DEMO_PASSWORD,
    anonymize: bool = True,
    attacks: bool = True,
    say: Callable[[str], None] = lambda line: None,
    echo: Echo | None = None,
) -> DemoLoad:
    """Create the demo researcher, a collection study and an anonymized intruder study.

    With `anonymize`, descriptions still lacking a model anonymization go through an
    `anonymize_study` job run right here (the same code path as the worker), and the
    resulting drafts without leak warnings are released. Invented intruder judgments are
    added to the released texts, and with `attacks` a risk check and a report run of the
    cheap attacks run here too (jobs again), so the risk report is there from the start.
    `say` receives a line as each step starts, `echo(done, total, message)` the jobs'
    progress: a first start takes minutes and should not be silent.
    """
    say("creating the demo researcher and studies, importing the demo texts")
    with transaction.atomic():
        owner = _researcher(password)
        collection = _study(
            owner,
            COLLECTION_SLUG,
            title="Demo: describe three people",
            kind=Study.Kind.COLLECTION,
            min_description_chars=500,
            consent_text=CONSENT,
            instructions_text=WRITER_INSTRUCTIONS,
            debrief_text=DEBRIEF,
            completion_code="DEMOWRITE",
            is_open=True,
        )
        intruder = _study(
            owner,
            INTRUDER_SLUG,
            title="Demo: who is described here?",
            kind=Study.Kind.INTRUDER,
            items_per_participant=5,
            # Its two famous (invented) persons: the debrief asks who had heard of them.
            ask_familiarity=True,
            # Three slots per text hold the invented demo judgments; two are left to play.
            judgments_per_text=5,
            consent_text=CONSENT,
            instructions_text=INTRUDER_INSTRUCTIONS,
            debrief_text=DEBRIEF,
            completion_code="DEMOINTRUDE",
            is_open=True,
        )
        demo = DemoLoad(RESEARCHER_USERNAME, password, collection, intruder)
        demo.imported["collection targets"] = _import_once(
            collection, "targets.jsonl", collection.targets.exists()
        )
        demo.imported["intruder targets"] = _import_once(
            intruder, "targets.jsonl", intruder.targets.exists()
        )
        demo.imported["intruder descriptions"] = _import_once(
            intruder, "descriptions.jsonl", intruder.descriptions.exists()
        )
    pending = intruder.descriptions.exclude(
        anonymizations__method=anonymization.MODEL_METHOD
    ).exists()
    if anonymize and pending:
        say(
            f"anonymizing {intruder.descriptions.count()} demo descriptions with the shipped "
            "model (loads the model first)"
        )
        demo.anonymization_job = _anonymize(intruder, owner, echo)
    model_texts = AnonymizedText.objects.filter(
        description__study=intruder, method=anonymization.MODEL_METHOD
    )
    demo.released, demo.held_back = review.anonymized_texts_release(texts=model_texts, user=owner)
    job = demo.anonymization_job
    if model_texts.exists() and (job is None or job.status == Job.Status.SUCCEEDED):
        from intruder.risk.demo import load_demo_judgments, run_demo_attacks

        say("adding the invented intruder judgments (simulated, and labelled so)")
        demo.judgments_created = load_demo_judgments(intruder, DEMO_DIR / DEMO_JUDGMENTS)
        if attacks:
            say("running the demo's risk check and risk report (cheap attacks)")
            demo.risk_check, demo.risk_report = run_demo_attacks(intruder, owner, echo=echo)
    if anonymize:
        from intruder.annotation.demo import demo_annotation_load

        say("loading the demo PSI annotation project")
        demo.annotation = demo_annotation_load(owner=owner, study=intruder)

    say("storing the analysis and agreement pages, so that their first view is quick")
    report_prepare(study=intruder, name=ANALYSIS_PAGE)
    if demo.annotation is not None:
        report_prepare(project=demo.annotation, name=AGREEMENT_PAGE)
    return demo

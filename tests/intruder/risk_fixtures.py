"""A small study of made-up persons for attack-run tests (written for the tests)."""

from __future__ import annotations

from typing import Any

from intruder.models import AnonymizedText, Job, Study
from intruder.risk.models import AttackRun, GuardRun
from intruder.services.anonymization import MODEL_METHOD
from tests.intruder.factories import make_description, make_study, make_target

# Each made-up person has facts that recur across descriptions, as in real crowd texts.
FACTS = {
    "orlena": ("Orlena Vasquith", "glassblower harbour Quellmar cobalt lanterns kiln"),
    "bastian": ("Bastian Kreoll", "submarine cartographer Vennic trench pepper clarinet"),
    "maelis": ("Maelis Dorrow", "beekeeper orchard Tillbury honey mead festival"),
    "corvin": ("Corvin Aske", "lighthouse keeper fjord storms rowing seals"),
}
# Configs that keep attacks to milliseconds: no spaCy curation, no NER-masked copy.
FAST_CONFIG: dict[str, Any] = {
    "use_document_curation": False,
    "anonymize_background_knowledge": False,
    "cache_dir": "",
}


def risk_study(*, per_person: int = 3, owner: Any = None) -> Study:
    """Return a study with `per_person` descriptions of each made-up person, anonymized."""
    study = make_study(owner=owner)
    for key, (name, facts) in FACTS.items():
        target = make_target(study=study, key=key, name=name)
        words = facts.split()
        for n in range(per_person):
            picked = " ".join(words[n % 2 :: 1])
            text = (
                f"{name} is someone I know well. They love {picked}. "
                f"Writer {n} says the {words[n % len(words)]} matters most to {name}."
            )
            description = make_description(study=study, target=target, text=text)
            AnonymizedText.objects.create(
                description=description,
                text=text.replace(name, "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1"),
                status=AnonymizedText.Status.DRAFT,
            )
    return study


# How many of three intruders name each person (made up, to give humans a profile).
HUMAN_HITS = {"orlena": 3, "bastian": 2, "maelis": 1, "corvin": 0}


def add_judgments(study: Study) -> None:
    """Let three made-up intruders judge every text; HUMAN_HITS of them name the person."""
    from tests.intruder.factories import make_judgment, make_participant

    intruders = [make_participant(study=study) for _ in range(3)]
    texts = AnonymizedText.objects.filter(description__study=study).select_related(
        "description__target"
    )
    for position, text in enumerate(texts, 1):
        target = text.description.target
        for slot, intruder in enumerate(intruders, 1):
            named = slot <= HUMAN_HITS[target.key]
            make_judgment(
                participant=intruder,
                text=text,
                position=position,
                slot=slot,
                self_identified=named,
                guessed_name=target.name if named else "",
                cosine=1.0 if named else 0.0,
                identified=named,
            )


def finished_cheap_run(methods: list[str]) -> AttackRun:
    """Return a TF-IDF + BM25 run (3 folds) on a judged `risk_study`, executed to the end."""
    from intruder.risk import attack_runs
    from intruder.services import jobs

    study = risk_study()
    add_judgments(study)
    run = attack_runs.attack_run_start(
        study=study,
        user=study.owner,
        attacks=["tfidf", "bm25"],
        methods=methods,
        folds=3,
        config=FAST_CONFIG,
    )
    job = jobs.job_execute(run.job.pk)
    assert job.status == "succeeded", job.error
    run.refresh_from_db()
    return run


# Made-up persons; each writer mentions the person's one telling hobby: the word the guard
# must mask.
HOBBIES = {"alma": "pottery", "bruno": "chess", "cleo": "baking", "zora": "origami"}


def study_with_guardable_texts(status: str = AnonymizedText.Status.DRAFT) -> Study:
    """Return a study of 4 persons x 3 texts whose one hobby word tells them apart."""
    study = make_study()
    for key, hobby in HOBBIES.items():
        target = make_target(study=study, key=key, name=key.title())
        for variant in range(3):
            text = (
                f"PERSON paints rivers{' daily' * variant} and teaches drawing, and loves {hobby}."
            )
            description = make_description(study=study, target=target, text=text)
            AnonymizedText.objects.create(
                description=description,
                method=MODEL_METHOD,
                text="PERSON_FIRSTNAME_1" + text[6:],
                spans=[{"start": 0, "end": 6, "category": "PERSON_FIRSTNAME"}],
                status=status,
            )
    return study


def guard_run_of(study: Study, *, status: str | None = None, **settings: Any) -> GuardRun:
    """Return a guard run of `study` (rank 2, 3 folds unless given), with a job row of
    `status` if given (no worker runs it: the test calls `execute_guard_run` itself)."""
    from tests.intruder.factories import make_job

    fields: dict[str, Any] = {"rank": 2, "budget": 0.3, "folds": 3, "attacks": ["tfidf", "bm25"]}
    fields.update(settings)
    job = make_job(study=study, kind=Job.Kind.GUARD_STUDY, status=status) if status else None
    return GuardRun.objects.create(study=study, job=job, created_by=study.owner, **fields)


def guarded_run(study: Study, *, status: str | None = None, **settings: Any) -> GuardRun:
    """Return a guard run of `study` (as `guard_run_of`) executed to the end in-process."""
    from intruder.risk.guarding import execute_guard_run

    run = guard_run_of(study, status=status, **settings)
    execute_guard_run(run=run, progress=lambda *a, **kw: None)
    return run

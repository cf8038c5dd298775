"""Attack runs: settings validated, results stored per text, a crashed run resumes exactly."""

from __future__ import annotations

import pytest

from attacks.registry import get_attack
from intruder.models import Job
from intruder.risk import attack_runs
from intruder.risk.models import AttackResult, AttackRun
from intruder.services import jobs
from tests.intruder.factories import make_description, make_user
from tests.intruder.risk_fixtures import FACTS, FAST_CONFIG, risk_study

pytestmark = pytest.mark.django_db


class Crash(RuntimeError):
    """Simulated worker death."""


def crashing_factory(after_fits: int):
    """Return an attack factory whose fits crash after `after_fits` successful ones."""
    fits = {"n": 0}

    def factory(name, config):
        attack = get_attack(name, config)
        fit = attack.fit

        def counting_fit(background, progress=None):
            if fits["n"] >= after_fits:
                raise Crash("worker died")
            fits["n"] += 1
            return fit(background, progress)

        attack.fit = counting_fit
        return attack

    return factory


def start(study, **overrides):
    settings = {
        "study": study,
        "user": study.owner,
        "attacks": ["tfidf", "bm25"],
        "methods": ["textwash-model", "clear"],
        "folds": 3,
        "config": FAST_CONFIG,
    }
    settings.update(overrides)
    return attack_runs.attack_run_start(**settings)


def test_a_run_stores_one_result_per_text_method_and_attack_and_a_trir_table():
    study = risk_study()
    run = start(study)
    assert run.job.kind == "attack_study" and run.job.params == {"run": run.pk}
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert run.results.count() == 12 * 2 * 2 == job.result["results"] == job.result["expected"]
    assert job.progress_done == job.progress_total == 48
    run.refresh_from_db()
    clear = run.summary["trir"]["clear"]
    assert set(clear) == {"tfidf", "bm25", "strongest"}
    assert clear["strongest"]["trir"] >= max(clear["tfidf"]["trir"], clear["bm25"]["trir"])
    assert clear["tfidf"]["trir"] > 50  # the clear text names the person
    result = run.results.filter(method="clear", attack="tfidf", true_rank=1).first()
    assert result.driving_words and result.fold in (0, 1, 2)
    stored = run.results.filter(method="textwash-model").first()
    assert stored.anonymized_text is not None and 0 < stored.masked_share < 1
    assert run.results.filter(method="clear").first().masked_share == 0


def test_a_crashed_run_resumes_without_losing_or_duplicating_results():
    study = risk_study()
    run = start(study)
    job = jobs.job_execute(run.job.pk)  # a complete run, to compare with
    complete = {
        (r.description_id, r.method, r.attack): (r.predicted_key, r.true_rank, r.fold)
        for r in run.results.all()
    }
    crashed = start(study)
    claimed = jobs.job_claim_next()
    assert claimed.pk == crashed.job.pk
    from intruder.services.jobs import JobProgress

    with pytest.raises(Crash):
        attack_runs.execute_attack_run(
            run=crashed, progress=JobProgress(claimed), attack_factory=crashing_factory(3)
        )
    partial = crashed.results.count()
    assert 0 < partial < len(complete)
    Job.objects.filter(pk=claimed.pk).update(status=Job.Status.FAILED)
    job = jobs.job_retry(job=Job.objects.get(pk=claimed.pk))
    job = jobs.job_execute(job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    resumed = {
        (r.description_id, r.method, r.attack): (r.predicted_key, r.true_rank, r.fold)
        for r in crashed.results.all()
    }
    assert resumed == complete
    assert crashed.results.count() == len(complete)


def test_a_runs_cache_and_working_files_live_under_the_attack_dir_not_the_workers_folder(
    settings, tmp_path
):
    settings.INTRUDER_ATTACK_DIR = tmp_path
    study = risk_study()
    seen = []

    def factory(name, config):
        seen.append((config.cache_dir, config.output_folder_path))
        return get_attack(name, config)

    from intruder.services.jobs import JobProgress

    config = {k: v for k, v in FAST_CONFIG.items() if k != "cache_dir"}
    run = start(study, config=config)
    attack_runs.execute_attack_run(
        run=run, progress=JobProgress(jobs.job_claim_next()), attack_factory=factory
    )
    Job.objects.filter(pk=run.job.pk).update(status=Job.Status.SUCCEEDED)
    assert set(seen) == {(str(tmp_path / "cache"), str(tmp_path / "runs" / str(run.pk)))}
    # An operator's own cache folder (CLI, benchmark) still wins.
    seen.clear()
    run = start(study, config={**config, "cache_dir": str(tmp_path / "mine")})
    attack_runs.execute_attack_run(
        run=run, progress=JobProgress(jobs.job_claim_next()), attack_factory=factory
    )
    Job.objects.filter(pk=run.job.pk).update(status=Job.Status.SUCCEEDED)
    assert {cache for cache, _ in seen} == {str(tmp_path / "mine")}


def test_a_run_is_one_job_per_fold_and_a_failed_fold_is_retried_with_the_run(monkeypatch):
    study = risk_study()
    complete = start(study)
    jobs.job_execute(complete.job.pk)
    expected = {
        (r.description_id, r.method, r.attack): (r.predicted_key, r.true_rank, r.fold)
        for r in complete.results.all()
    }
    run = start(study)
    real = attack_runs.execute_attack_run

    def fold_2_crashes(**kwargs):
        if kwargs.get("fold_indices") == {2}:
            raise Crash("worker died in fold 3")
        return real(**kwargs)

    monkeypatch.setattr(attack_runs, "execute_attack_run", fold_2_crashes)
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.FAILED and "fold 3 of 3 failed" in job.message
    folds = Job.objects.filter(kind="attack_fold", params__run=run.pk).order_by("pk")
    assert [(f.params["fold"], f.status) for f in folds] == [
        (0, "succeeded"),
        (1, "succeeded"),
        (2, "failed"),
    ]
    assert all(f.study is None and f.params["parent"] == job.pk for f in folds)
    stored = set(run.results.values_list("pk", flat=True))

    monkeypatch.setattr(attack_runs, "execute_attack_run", real)
    job = jobs.job_execute(jobs.job_retry(job=job).pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert Job.objects.filter(kind="attack_fold", params__run=run.pk).count() == 3
    assert stored <= set(run.results.values_list("pk", flat=True))  # folds 1-2 kept
    resumed = {
        (r.description_id, r.method, r.attack): (r.predicted_key, r.true_rank, r.fold)
        for r in run.results.all()
    }
    assert resumed == expected
    assert job.progress_done == job.progress_total == job.result["expected"] == len(expected)


def test_runs_with_tria_and_their_folds_go_to_the_gpu_queue(
    settings, monkeypatch, django_capture_on_commit_callbacks
):
    queued: list[tuple[str, int]] = []

    class FakeQueue:
        def __init__(self, name):
            self.name = name

        def enqueue(self, function, job_id, **kwargs):
            queued.append((self.name, job_id))

    settings.INTRUDER_JOB_BACKEND = "rq"
    settings.INTRUDER_RQ_GPU_QUEUE = "intruder-gpu"
    monkeypatch.setattr(jobs, "rq_queue", lambda name=None: FakeQueue(name))
    study = risk_study()
    with django_capture_on_commit_callbacks(execute=True):
        cheap = start(study)
    # One queued-or-running attack run per study (issue 22): the first is done before the next.
    Job.objects.filter(pk=cheap.job.pk).update(status=Job.Status.SUCCEEDED)
    with django_capture_on_commit_callbacks(execute=True):
        heavy = start(study, attacks=["tria", "tfidf"])
    assert queued == [("intruder", cheap.job.pk), ("intruder-gpu", heavy.job.pk)]
    with django_capture_on_commit_callbacks(execute=True):
        folds = attack_runs._fold_jobs(heavy, heavy.job)
    assert all(f.params["gpu"] for f in folds)
    assert queued[2:] == [("intruder-gpu", f.pk) for f in folds]


def test_a_retry_after_new_descriptions_attacks_the_texts_of_its_first_start():
    study = risk_study()
    run = start(study)
    AttackRun.objects.filter(pk=run.pk).update(summary={"description_ids": []})
    make_description(study=study, target=study.targets.first(), text="added later")
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.SUCCEEDED
    assert run.results.count() == 0


def test_uploaded_background_attacks_every_text_once_without_folds():
    study = risk_study()
    documents = {key: facts for key, (_, facts) in FACTS.items() if key != "corvin"}
    run = start(study, background=AttackRun.Background.UPLOADED, background_documents=documents)
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert set(run.results.values_list("fold", flat=True)) == {None}
    corvin = run.results.filter(description__target__key="corvin")
    assert corvin.exists() and all(r.true_rank is None for r in corvin)
    run.refresh_from_db()
    assert run.summary["trir"]["clear"]["tfidf"]["cap"] == pytest.approx(75.0)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"attacks": []}, "at least one attack"),
        ({"attacks": ["gpt"]}, "unknown attack"),
        ({"methods": ["presidio"]}, "no texts of method"),
        ({"methods": ["model@1.5"]}, "must lie in"),
        ({"methods": ["model@x"]}, "must be a number"),
        ({"folds": 1}, "between 2 and 20"),
        ({"config": {"bogus": 1}}, "unknown config key"),
        ({"config": {"num_threads": 10000}}, "num_threads must be between 0 and 256"),
        ({"config": {"top_k": 100000000}}, "top_k must be between 1 and 1000"),
        ({"background": "uploaded", "background_documents": {}}, "upload background"),
        ({"background": "uploaded", "background_documents": {"nobody": "x"}}, "unknown target"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_stored(overrides, message):
    study = risk_study(per_person=1)
    with pytest.raises(attack_runs.AttackRunError, match=message):
        start(study, **overrides)
    assert not AttackRun.objects.exists() and not Job.objects.exists()


def test_risk_check_runs_the_cheap_attacks_on_every_stored_method():
    study = risk_study(per_person=1)
    run = attack_runs.risk_check_start(study=study, user=make_user())
    assert run.purpose == AttackRun.Purpose.RISK_CHECK
    assert run.attacks == list(attack_runs.CHEAP_ATTACKS)
    assert run.methods == ["textwash-model"]


def test_masked_share_counts_words_replaced_by_placeholders():
    original = "Mira Okafor was born in Lagos"
    assert attack_runs.masked_share(original, original) == 0
    masked = "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 was born in LOCATION_1"
    assert attack_runs.masked_share(original, masked) == pytest.approx(3 / 6)
    assert attack_runs.masked_share("", "x") is None


def test_results_are_unique_per_text_method_and_attack():
    study = risk_study(per_person=1)
    run = start(study, methods=["clear"], attacks=["tfidf"])
    jobs.job_execute(run.job.pk)
    first = run.results.first()
    duplicate = AttackResult(
        run=run,
        description=first.description,
        method=first.method,
        attack=first.attack,
        predicted_key="x",
    )
    AttackResult.objects.bulk_create([duplicate], ignore_conflicts=True)
    assert run.results.count() == 4


def test_study_methods_lists_each_method_once():
    study = risk_study()
    assert attack_runs.study_methods(study) == ["textwash-model"]


def test_tria_runs_per_fold_through_the_public_attack_interface(tiny_bert_dir):
    study = risk_study(per_person=2)
    config = {
        **FAST_CONFIG,
        "base_model_name": str(tiny_bert_dir),
        "use_additional_pretraining": False,
        "finetuning_epochs": 2,
        "finetuning_batch_size": 8,
        "finetuning_sliding_window": "32-8",
        "precision": "fp32",
    }
    run = start(study, attacks=["tria", "tfidf"], methods=["clear"], folds=2, config=config)
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    tria = run.results.filter(attack="tria")
    assert tria.count() == 8
    assert all(r.true_prob is not None and len(r.top_k) == 4 for r in tria)
    run.refresh_from_db()
    assert set(run.summary["trir"]["clear"]) == {"tria", "tfidf", "strongest"}


def test_distractors_widen_the_candidates_but_never_a_texts_own_background():
    from intruder.risk.attack_runs import DISTRACTOR_PREFIX, _backgrounds
    from intruder.risk.selectors import machine_side, run_report
    from tests.intruder.risk_fixtures import add_judgments

    study = risk_study()
    add_judgments(study)
    own_text = study.descriptions.first().text
    population = {
        "Ilse Marrow": "tapestry weaver of Dunholm, famous for indigo dyes and canal barges",
        "Piet Sandoval": "racing pigeon breeder who keeps lofts above a bakery in Ostend",
        "Orlena Vasquith": "a study person: dropped",  # by name
        "Someone Else": own_text,  # a study description: dropped
    }
    run = attack_runs.attack_run_start(
        study=study,
        user=study.owner,
        attacks=["tfidf"],
        methods=["textwash-model"],
        folds=3,
        distractor_documents=population,
        config=FAST_CONFIG,
    )
    assert set(run.distractor_documents) == {"Ilse Marrow", "Piet Sandoval"}
    assert sorted(run.summary["distractors_dropped"]) == ["Orlena Vasquith", "Someone Else"]
    descriptions = list(study.descriptions.select_related("target").order_by("pk"))
    targets = {d.target.key for d in descriptions}
    for unit in _backgrounds(run, descriptions):
        extra = {k for k in unit.texts_by_person if k.startswith(DISTRACTOR_PREFIX)}
        assert extra == {f"{DISTRACTOR_PREFIX}Ilse Marrow", f"{DISTRACTOR_PREFIX}Piet Sandoval"}
        assert not extra & targets
        attacked = {d.pk: d for d in descriptions if str(d.pk) in set(unit.test_ids)}
        for description in attacked.values():
            for texts in unit.texts_by_person.values():
                assert description.text not in texts  # never its own background
    assert jobs.job_execute(run.job.pk).status == "succeeded"
    side = machine_side(run)
    assert side["candidates"] == 6 and side["study_candidates"] == 4 and side["distractors"] == 2
    report = run_report(run)
    assert report.threat_model["machine"]["candidates"] == 6
    assert report.threat_model["machine"]["chance_pct"] == pytest.approx(100 / 6)
    ladder = report.tables["open_world"]
    assert ladder["candidates"].tolist() == [6]

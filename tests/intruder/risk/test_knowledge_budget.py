"""Attack runs at a knowledge budget: b descriptions per candidate, R resamples, never a leak."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from attacks.registry import get_attack
from intruder.models import Description, Job
from intruder.risk import attack_runs
from intruder.risk.models import AttackRun
from intruder.risk.rendering import threat_rows
from intruder.risk.selectors import run_report
from intruder.services import jobs
from tests.intruder.factories import make_user
from tests.intruder.risk_fixtures import FAST_CONFIG, risk_study

pytestmark = pytest.mark.django_db


def start(study, **overrides):
    settings = {
        "study": study,
        "user": study.owner,
        "attacks": ["tfidf", "bm25"],
        "methods": ["clear", "textwash-model"],
        "folds": 2,
        "config": FAST_CONFIG,
        "knowledge_budget": 1,
    }
    return attack_runs.attack_run_start(**(settings | overrides))


def spy_factory(seen: list[tuple[set[str], list[str]]]):
    """Return a factory whose attacks record each fit's background and each query."""

    def factory(name, config):
        attack = get_attack(name, config)
        fit, predict = attack.fit, attack.predict

        def spying_fit(background, progress=None):
            attack.known = set(background.values())
            return fit(background, progress)

        def spying_predict(documents, *args, **kwargs):
            seen.append((attack.known, list(documents.values())))
            return predict(documents, *args, **kwargs)

        attack.fit, attack.predict = spying_fit, spying_predict
        return attack

    return factory


def test_a_budget_run_stores_median_ranks_and_hit_shares_and_never_shows_a_text_itself():
    study = risk_study(per_person=4)
    run = start(study, budget_resamples=10)
    assert (run.knowledge_budget, run.budget_resamples) == (1, 10)
    seen: list = []
    jobs.job_claim_next()
    attack_runs.execute_attack_run(
        run=run, progress=lambda *a: None, attack_factory=spy_factory(seen)
    )
    originals = set(Description.objects.filter(study=study).values_list("text", flat=True))
    # 2 methods x 2 attacks x 10 resamples x 2 folds fits, each with 1 text per person.
    assert len(seen) == 2 * 2 * 10 * 2
    for known, queries in seen:
        assert len(known) == 4  # one text per candidate, joined: a profile each
        assert known <= originals
        assert not known & set(queries)  # the clear text attacked is never its own background
    assert run.results.count() == 16 * 2 * 2
    shares = list(run.results.values_list("hit_share", flat=True))
    assert all(0 <= s <= 1 for s in shares)
    for result in run.results.all():
        assert (result.true_rank == 1) == (result.hit_share > 0.5) or result.hit_share == 0.5
    attack_runs._finish(run)
    run.refresh_from_db()
    cell = run.summary["trir"]["clear"]["tfidf"]
    tfidf = run.results.filter(method="clear", attack="tfidf").values_list("hit_share", flat=True)
    assert cell["mean_hit_share_pct"] == pytest.approx(100 * sum(tfidf) / len(tfidf))
    assert cell["resamples"] == 10


def test_a_budget_run_with_distractors_knows_each_through_its_one_document_in_every_draw():
    study = risk_study(per_person=4)
    distractors = {"Ilse Marrow": "weaver of Dunholm, famed for blue cloth", "Odo Fenn": "a miller"}
    run = start(study, methods=["clear"], distractor_documents=distractors)
    seen: list = []
    jobs.job_claim_next()
    attack_runs.execute_attack_run(
        run=run, progress=lambda *a: None, attack_factory=spy_factory(seen)
    )
    originals = set(Description.objects.filter(study=study).values_list("text", flat=True))
    assert len(seen) == 2 * 10 * 2  # 2 attacks x 10 resamples x 2 folds
    for known, queries in seen:
        # 4 study persons at b = 1 and both distractors, each through its own document.
        assert len(known) == 6 and set(distractors.values()) <= known
        assert known - set(distractors.values()) <= originals
        assert not known & set(queries)
    # Only the study's texts are attacked; a distractor is a candidate, never a target.
    assert run.results.count() == 16 * 2
    attacked = set(run.results.values_list("description_id", flat=True))
    assert attacked == set(study.descriptions.values_list("pk", flat=True))
    report = run_report(run, human_method="clear")
    machine = report.threat_model["machine"]
    assert (machine["candidates"], machine["distractors"]) == (4 + 2, 2)
    assert machine["knowledge"] == "the attacker knows each candidate as well as 1 writer does"


def test_the_budget_never_resamples_a_distractor_and_refuses_one_named_like_a_person():
    from attacks.background import BackgroundRecord
    from attacks.budget import run_budget
    from attacks.config import AttackConfig
    from attacks.prepared import PreparedTexts

    records = [
        BackgroundRecord(f"{p}{i}", p, None, f"{p} text {i}") for p in "ab" for i in range(3)
    ]
    prepared = PreparedTexts(AttackConfig(cache_dir="", use_document_curation=False))
    rows = run_budget(
        prepared,
        ["tfidf"],
        records,
        {"a0": "a text 0"},
        1,
        resamples=10,
        folds=3,
        distractors={"zed": "zed text"},
    )
    assert {row["candidates"] for row in rows} == {3}
    with pytest.raises(ValueError, match="is a person of the records"):
        run_budget(prepared, ["tfidf"], records, {"a0": "x"}, 1, distractors={"a": "x"})


def test_the_same_seed_gives_the_same_results_and_the_threat_box_names_the_budget():
    study = risk_study(per_person=4)
    first = start(study, seed=3)
    assert jobs.job_execute(first.job.pk).status == Job.Status.SUCCEEDED
    second = start(study, seed=3)
    assert jobs.job_execute(second.job.pk).status == Job.Status.SUCCEEDED

    def outcome(run):
        return sorted(
            run.results.values_list("description_id", "method", "attack", "true_rank", "hit_share")
        )

    assert outcome(first) == outcome(second)
    report = run_report(second, human_method="textwash-model")
    machine = report.threat_model["machine"]
    assert machine["knowledge"] == "the attacker knows each candidate as well as 1 writer does"
    assert ("Knowledge", machine["knowledge"]) in threat_rows(report)["Machine attacker"]
    assert "1 of the study's own original descriptions per person" in machine["background_source"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"attacks": ["tria"]}, "retrieval attacks"),
        ({"budget_resamples": 3}, "resamples must lie between 10"),
        ({"knowledge_budget": 0}, "between 1 and"),
        ({"knowledge_budget": None, "budget_resamples": 10}, "need a knowledge budget"),
        (
            {"background": AttackRun.Background.UPLOADED, "background_documents": {"orlena": "x"}},
            "study's own descriptions",
        ),
    ],
)
def test_bad_budgets_are_refused(overrides, message):
    study = risk_study()
    with pytest.raises(attack_runs.AttackRunError, match=message):
        start(study, **overrides)
    assert not AttackRun.objects.exists()


def test_the_api_starts_a_budget_run_and_refuses_it_to_other_accounts():
    study = risk_study()
    api = APIClient()
    api.force_authenticate(study.owner)
    payload = {"study": study.pk, "attacks": ["tfidf"], "methods": ["clear"], "folds": 2}
    zero = api.post("/api/attack-runs/create/", payload | {"knowledge_budget": 0}, format="json")
    assert zero.status_code == 400 and "knowledge_budget" in zero.json()
    created = api.post("/api/attack-runs/create/", payload | {"knowledge_budget": 2}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["knowledge_budget"] == 2 and created.json()["budget_resamples"] == 10
    run = AttackRun.objects.get(pk=created.json()["id"])
    run.config = FAST_CONFIG
    run.save(update_fields=["config"])
    assert jobs.job_execute(run.job.pk).status == Job.Status.SUCCEEDED
    results = api.get("/api/attack-results/", {"run": run.pk}).json()["results"]
    assert results and all(0 <= r["hit_share"] <= 1 for r in results)
    stranger = APIClient()
    stranger.force_authenticate(make_user())
    forged = stranger.post(
        "/api/attack-runs/create/", payload | {"knowledge_budget": 2}, format="json"
    )
    assert forged.status_code == 404
    assert AttackRun.objects.count() == 1


def test_the_risk_page_form_starts_a_budget_run_and_the_report_says_so():
    from django.urls import reverse

    from tests.intruder.factories import logged_in

    study = risk_study(per_person=4)
    client = logged_in(study.owner)
    page = client.get(reverse("risk-page", args=[study.slug])).content.decode()
    assert 'name="knowledge_budget"' in page and 'name="budget_resamples"' in page
    form = {
        "attacks": ["tfidf"],
        "methods": ["clear"],
        "background": "cross_validated",
        "folds": 2,
        "seed": 0,
        "knowledge_budget": 2,
    }
    bad = client.post(reverse("risk-run-start", args=[study.slug]), form | {"attacks": ["tria"]})
    assert bad.status_code == 302 and not AttackRun.objects.exists()
    client.post(reverse("risk-run-start", args=[study.slug]), form)
    run = AttackRun.objects.get()
    assert (run.knowledge_budget, run.budget_resamples) == (2, 10)
    run.config = FAST_CONFIG
    run.save(update_fields=["config"])
    assert jobs.job_execute(run.job.pk).status == Job.Status.SUCCEEDED
    body = client.get(reverse("risk-page", args=[study.slug]) + f"?run={run.pk}").content.decode()
    assert "b = 2 per person × 10 resamples" in body
    assert "as well as 2 writers do" in " ".join(body.split())


def test_the_risk_report_command_runs_a_budget_and_says_so(tmp_path):
    from django.core.management import call_command

    study = risk_study(per_person=3)
    args = ["--attack", "--attacks", "tfidf", "--methods", "clear", "--folds", "2", "--no-pdf"]
    call_command("risk_report", study.slug, "--out", str(tmp_path), *args, "--budget", "1")
    run = AttackRun.objects.get()
    assert (run.knowledge_budget, run.budget_resamples) == (1, 10)
    assert run.job.status == Job.Status.SUCCEEDED and run.results.count() == 12
    html = " ".join((tmp_path / "report.html").read_text().split())
    assert "the attacker knows each candidate as well as 1 writer does" in html


def test_the_report_puts_the_studys_runs_side_by_side_by_knowledge_budget():
    from intruder.risk.report.summary import KNOWLEDGE_NOTE
    from tests.intruder.risk_fixtures import finished_cheap_run

    plain = finished_cheap_run(["textwash-model"])
    budget = start(plain.study, methods=["textwash-model"], knowledge_budget=1)
    assert jobs.job_execute(budget.job.pk).status == Job.Status.SUCCEEDED
    report = run_report(budget, human_method="textwash-model")
    table = report.tables["knowledge_budget"]
    # bm25, tfidf and the strongest adversary (last) per budget.
    assert list(table["knowledge_budget"]) == ["1", "1", "1", "all", "all", "all"]
    assert list(table["attack"])[:3] == ["bm25", "tfidf", "strongest"]
    row = table[(table["knowledge_budget"] == "1") & (table["attack"] == "tfidf")].iloc[0]
    results = budget.results.filter(method="textwash-model", attack="tfidf")
    # The run's one TRIR: texts whose median rank over the resamples is 1, of the texts.
    median_first = sum(r.true_rank == 1 for r in results)
    assert row["n_texts"] == results.count() == 12 and row["resamples"] == 10
    assert row["trir"] == pytest.approx(100 * median_first / 12)
    assert row["trir_ci_low"] <= row["trir"] <= row["trir_ci_high"]
    assert row["persons"] == 4  # each person's machine rate beside the human rate
    full = table[(table["knowledge_budget"] == "all") & (table["attack"] == "tfidf")].iloc[0]
    assert full["trir"] == pytest.approx(plain.summary["trir"]["textwash-model"]["tfidf"]["trir"])
    assert report.notes["knowledge_budget"].startswith(KNOWLEDGE_NOTE)
    assert "Nearest the human rate: the strongest adversary at" in report.notes["knowledge_budget"]
    from django.urls import reverse

    from intruder.risk.report.tables import RISK_TABLE_TITLES
    from tests.intruder.factories import logged_in

    page = logged_in(budget.study.owner).get(
        reverse("risk-page", args=[budget.study.slug]) + f"?run={budget.pk}"
    )
    body = " ".join(page.content.decode().replace("&#x27;", "'").split())
    assert RISK_TABLE_TITLES["knowledge_budget"] in body and KNOWLEDGE_NOTE in body
    assert report.settings["knowledge_budget_nearest"] in body
    # The predicted-human model refitted per budget: 4 persons are below the minimum of 5.
    predicted = report.tables["knowledge_budget_predicted"]
    assert list(predicted["knowledge_budget"]) == ["1", "all"]
    assert (predicted["n"] == 4).all() and predicted["lopo_rho"].isna().all()
    assert predicted["note"].str.contains("needs 5 persons").all()
    assert RISK_TABLE_TITLES["knowledge_budget_predicted"] in body


def test_every_table_of_a_budget_run_gives_one_trir_per_attack_and_text_set():
    """The headline, the open-world table, the ladder, the per-method table, the per-text
    results and the API: one TRIR (median rank over the resamples is 1, Wilson over texts)."""
    from intruder.risk.attack_runs import trir_table
    from tests.intruder.risk_fixtures import add_judgments

    study = risk_study(per_person=4)
    add_judgments(study)
    budget = start(study, methods=["textwash-model"], seed=5)
    assert jobs.job_execute(budget.job.pk).status == Job.Status.SUCCEEDED
    budget.refresh_from_db()
    method = "textwash-model"
    report = run_report(budget, human_method=method)
    results = list(budget.results.filter(method=method))
    assert not report.tables["per_text"].empty
    api = trir_table(budget)[method]
    by_method = report.tables["trir_by_method"].set_index("method").loc[method]
    ladder = report.tables["knowledge_budget"]
    ladder = ladder[ladder["run"] == budget.pk].set_index("attack")
    open_world = report.tables["open_world"].set_index("run").loc[budget.pk]
    per_text = report.tables["per_text"]
    for attack in ("tfidf", "bm25", "strongest"):
        if attack == "strongest":
            machine = report.tables["machine_per_text"]
            all_hits = list(machine.loc[machine["method"] == method, "strongest_correct"])
        else:
            all_hits = [r.true_rank == 1 for r in results if r.attack == attack]
        # All texts of the method: the per-method table and the API.
        expected_all = 100 * sum(all_hits) / len(all_hits)
        assert by_method[f"trir_{attack}"] == pytest.approx(expected_all)
        assert api[attack]["trir"] == pytest.approx(expected_all), attack
        assert api[attack]["correct"] == sum(all_hits)
        # The judged texts: the headline, the open-world table, the ladder, the per-text rows.
        hits = per_text[f"{attack}_correct"].astype(bool)
        expected = 100 * hits.sum() / len(hits)
        headline = report.headline["machine"][attack]
        assert headline["pct"] == pytest.approx(expected)
        assert open_world[f"trir_{attack}"] == pytest.approx(expected)
        assert ladder.loc[attack, "trir"] == pytest.approx(expected)
        assert ladder.loc[attack, "n_texts"] == headline["n"] == len(hits)
        # One interval method: Wilson over the texts, the same bounds everywhere.
        for low, high in (
            (open_world[f"{attack}_ci_low"], open_world[f"{attack}_ci_high"]),
            (ladder.loc[attack, "trir_ci_low"], ladder.loc[attack, "trir_ci_high"]),
        ):
            assert (low, high) == pytest.approx((headline["ci_low"], headline["ci_high"]))
    # The mean share of resamples is there, named for what it is, never as a TRIR.
    assert "mean_hit_share_pct" in api["tfidf"] and "trir_mean_over_resamples" not in api["tfidf"]


def _budget_outcome(run):
    return sorted(
        run.results.values_list(
            "description_id", "method", "attack", "predicted_key", "true_rank", "hit_share"
        )
    )


def test_a_budget_run_resumes_through_the_loops_one_hook_and_stores_what_a_whole_run_does():
    """The budget is a dimension of `attacks.crossval.attack_cells`: a retried run asks the
    same resume hook as a plain run, attacks only the texts not stored, and ends with the rows
    of an uninterrupted run (the draws do not depend on what is left to attack)."""
    study = risk_study(per_person=4)
    whole = start(study, seed=2)
    assert jobs.job_execute(whole.job.pk).status == Job.Status.SUCCEEDED
    resumed = start(study, seed=2)
    assert jobs.job_execute(resumed.job.pk).status == Job.Status.SUCCEEDED
    # A crash after part of one cell was stored: half of clear x tfidf's texts lost.
    lost = list(
        resumed.results.filter(method="clear", attack="tfidf").values_list("pk", flat=True)
    )[::2]
    resumed.results.filter(pk__in=lost).delete()
    seen: list = []
    attack_runs.execute_attack_run(
        run=resumed, progress=lambda *a: None, attack_factory=spy_factory(seen)
    )
    assert _budget_outcome(resumed) == _budget_outcome(whole)
    # Only the lost texts were attacked again, once per resample, by tfidf alone.
    assert sum(len(queries) for _, queries in seen) == len(lost) * 10


def test_following_a_budget_run_enters_attack_runs_only_at_its_job_and_its_resume_hook():
    """The loop is the library's: attack_runs.py is entered from outside it only by the job
    (execute_attack_run_shared) and by the one resume hook `attack_cells` asks."""
    import sys
    from pathlib import Path

    study = risk_study(per_person=4)
    run = start(study)
    module = str(Path(attack_runs.__file__).resolve())
    entries: set[str] = set()

    def tracer(frame, event, arg):
        caller = frame.f_back
        inside = frame.f_code.co_filename == module
        if event == "call" and inside and caller and caller.f_code.co_filename != module:
            entries.add(frame.f_code.co_name)

    sys.setprofile(tracer)
    try:
        job = jobs.job_execute(run.job.pk)
    finally:
        sys.setprofile(None)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert entries == {"execute_attack_run_shared", "remaining"}

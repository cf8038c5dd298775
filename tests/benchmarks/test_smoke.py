"""Every benchmark runs in a tiny configuration and reports work; none can measure nothing.

A benchmark that stops measuring (prolific_replay.py once refused all 400 of its
participants at a closed door and still printed a clean result) fails here: each script runs
end to end in seconds, must exit 0 with its JSON written, and must exit 3
(`benchmarks/did_work.py`) when its run did no work. Timings in these runs mean nothing;
only that the script measured something is checked.

A benchmark of plain library code runs in this process: its `main()` is called with the
arguments in `sys.argv`, as `python benchmarks/<name>.py ...` would call it (issue 50: a child
process pays Python's start and the imports of torch, transformers and the project again, and
this worker has them already). Those that must be a program of their own say why
(`Smoke.process`): they start servers or PostgreSQL, set Django up on a database of their
own, or run the test command; the no-work exit status is checked on a real child process.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from research_data import missing_reason, textwash_study_dir, tria_wikiactors_dir
from tests.tiny_models import tiny_bert_saved

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
NO_WORK_EXIT = 3  # benchmarks/did_work.py
POSTGRES_BINARIES = bool(list(Path("/usr/lib/postgresql").glob("*/bin/postgres")))
pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Smoke:
    """One benchmark's tiny run: its arguments, what it needs, and the work its JSON shows."""

    args: Callable[[Path], list[str]]
    result: Callable[[Path], Path]
    work: Callable[[dict], int]
    needs_shared_data: bool = False
    needs_wikiactors: bool = False
    needs: str = ""  # an executable the run starts ("postgres", "chromium")
    env: dict[str, str] = field(default_factory=dict)
    process: str = ""  # why the run must be a child process; empty: main() runs in this one


def made_up_textwash(folder: Path) -> Path:
    """Write study1/study2.jsonl of invented persons in the Textwash study's columns."""
    rows = [
        {"person": "Orla Brennigan", "textwash": "Orla Brennigan is a PRONOUN pilot from Cork."},
        {"person": "Teo Maalouf", "textwash": "PERSON_FIRSTNAME_1 sings; Teo Maalouf toured."},
    ]
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("study1.jsonl", "study2.jsonl"):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def made_up_outsiders(folder: Path) -> Path:
    """Write a shared-data folder: the made-up Textwash studies and three invented outside
    names in WikiActors_500_random.json's shape."""
    made_up_textwash(folder / "textwash_study")
    actors = folder / "tria_wikiactors"
    actors.mkdir(parents=True, exist_ok=True)
    names = ["Orlan Bregginan", "Tea Malouff", "Ivo Quenneville"]
    (actors / "WikiActors_500_random.json").write_text(json.dumps([{"name": n} for n in names]))
    return folder


def tiny_wikiactors(folder: Path) -> Path:
    """Write the two WikiActors eval files cut to 6 persons and 600 characters a cell, in a
    temporary folder (read from the shared data, never kept in the repository)."""
    source = tria_wikiactors_dir()
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("WikiActors_50_eval.json", "WikiActors_50_eval_25pctBK.json"):
        rows = json.loads((source / name).read_text(encoding="utf-8"))[:6]
        cut = [
            {k: v[:600] if isinstance(v, str) and k != "name" else v for k, v in r.items()}
            for r in rows
        ]
        (folder / name).write_text(json.dumps(cut), encoding="utf-8")
    return folder


# A TRIA run small enough for a smoke test: no MLM pre-training, one epoch, short windows.
TINY_TRIA = [
    "finetuning_epochs=1",
    "use_additional_pretraining=false",
    'finetuning_sliding_window="50-10"',
    "anonymize_background_knowledge=false",
]


def _require(folder: Path) -> None:
    """Skip, saying why, where the public research data is absent."""
    if not folder.is_dir():
        pytest.skip(missing_reason(folder))


def tiny_anonymizer_speed(folder: Path) -> list[str]:
    """Return the arguments of one untimed pass over 4 descriptions (the anonymizer's speed)."""
    return ["--subset", "4", "--rounds", "1", "--no-quality", "--output", str(folder / "r.json")]


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


SHIPPED_MODEL = REPO / "anonymize" / "models" / "textwash-minilm"
# Why a benchmark runs as a child process (`Smoke.process`).
OWN_DATABASE = "sets Django up on a database of its own (settings are read once per process)"
SERVERS = "starts PostgreSQL and the site's servers"
SMOKES: dict[str, Smoke] = {
    "analysis_scale": Smoke(
        process=OWN_DATABASE,
        args=lambda t: ["--texts", "12", "--judgments", "2", "--out", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: len(r["analysis_page_tables"]) * r["construct_loss_progress_calls"],
    ),
    "annotation_textwash": Smoke(
        args=lambda t: ["--limit", "2", "--out", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: r["documents"],
        needs_shared_data=True,
    ),
    "anonymize_levers": Smoke(
        args=tiny_anonymizer_speed,
        result=lambda t: t / "r.json",
        work=lambda r: r["subset"],
        needs_shared_data=True,
        env={"MODEL_RUNTIME_CPU": "bf16,vnni"},
    ),
    "anonymize_speed": Smoke(
        args=tiny_anonymizer_speed,
        result=lambda t: t / "r.json",
        work=lambda r: r["subset"] if "subset" in r else len(r["speed"]),
        needs_shared_data=True,
        env={"MODEL_RUNTIME_CPU": "bf16,vnni"},  # its baseline is the bf16 setting
    ),
    "anonymize_training_parity": Smoke(
        args=lambda t: ["--run", f"shipped={SHIPPED_MODEL}", "--out", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: r["runs"]["shipped"]["steps"],
    ),
    "crowd_intruder": Smoke(
        args=lambda t: [
            "--out",
            str(t),
            "--limit",
            "30",
            "--resamples",
            "1",
            "--folds",
            "3",
            "--attacks",
            "tfidf",
            "--budgets",
            "1,all",
        ],
        result=lambda t: t / "summary.json",
        work=lambda r: (
            r["knowledge_budget"]["study2"]["1"]["tfidf"]["n"]
            * r["pooled"]["study1"]["all"]["tfidf"]["n"]
        ),
        needs_shared_data=True,
    ),
    "canary_near_misses": Smoke(
        args=lambda t: ["--canaries", "1", "--sentences", "200", "--out", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: r["checks"],
        needs_shared_data=True,
        needs_wikiactors=True,
    ),
    "dense_encoder_levers": Smoke(
        args=lambda t: ["--texts", "4", "--output", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: r["chunks"],
        needs_shared_data=True,
    ),
    "hardening_probe": Smoke(
        process=OWN_DATABASE,
        args=lambda t: ["--only", "probe_cpu_seam", "--out", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: sum(c["tried"] for c in r["categories"].values() if isinstance(c, dict)),
    ),
    "leak_checks": Smoke(
        args=lambda t: ["--data", str(made_up_textwash(t / "data")), "--out", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: r["texts"],
    ),
    "name_collisions": Smoke(
        args=lambda t: ["--data", str(made_up_textwash(t / "data")), "--out", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: r["studies"]["study1"]["persons"] * r["studies"]["study2"]["pairs"],
    ),
    "outsider_names": Smoke(
        args=lambda t: ["--data", str(made_up_outsiders(t / "data")), "--out", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: r["studies"]["study1"]["outside_names"] * r["studies"]["study1"]["typos"],
    ),
    "rehearsal": Smoke(
        process=OWN_DATABASE,
        args=lambda t: [
            "--participants",
            "2",
            "--mix",
            "honest_desktop=1",
            "--no-report",
            "--data",
            str(made_up_textwash(t / "data")),
            "--out",
            str(t / "r.json"),
        ],
        result=lambda t: t / "r.json",
        work=lambda r: r["outcomes"]["answers"],
    ),
    "strongest_wikiactors": Smoke(
        args=lambda t: [
            "--attacks",
            "tfidf,bm25",
            "--data-dir",
            str(tiny_wikiactors(t / "wa")),
            "--cache-dir",
            str(t / "cache"),
            "--run-dir",
            str(t / "runs"),
            "--out",
            str(t / "r.json"),
        ],
        result=lambda t: t / "r.json",
        work=lambda r: len(r["datasets"]),
        needs_wikiactors=True,
    ),
    "tria_levers": Smoke(
        # A tiny random BERT as the base model: the smoke run proves that each stage runs and
        # is timed; MiniLM's windows per second are the full run's (7 of its 11.5 CPU s).
        args=lambda t: [
            "--data",
            str(tiny_wikiactors(t / "wa") / "WikiActors_50_eval.json"),
            "--base-model",
            str(tiny_bert_saved(t / "tiny", max_positions=512)),
            "--only",
            "stages",
            "--precisions",
            "fp32",
            "--cache-dir",
            str(t / "cache"),
            "--out",
            str(t / "r.json"),
        ],
        result=lambda t: t / "r.json",
        work=lambda r: len(r["stages"]["fp32"]),
        needs_wikiactors=True,
    ),
    "tria_wikiactors": Smoke(
        args=lambda t: [
            "--data",
            str(tiny_wikiactors(t / "wa") / "WikiActors_50_eval.json"),
            "--run-dir",
            str(t / "runs"),
            "--cache-dir",
            str(t / "cache"),
            "--out",
            str(t / "r.json"),
            "--set",
            *TINY_TRIA,
        ],
        result=lambda t: t / "r.json",
        work=lambda r: sum(m["n"] for m in r["trir"].values()),
        needs_wikiactors=True,
    ),
    "tria_ablation": Smoke(
        # One rate of the three: each loads MiniLM and trains its head again (82 s for three
        # under the suite's load, issue 50); one proves the probe still trains and reports.
        # Batches of 2 and 8 held-out windows: the two held-out passes over 40 were most of
        # the remaining 14 CPU seconds.
        args=lambda t: [
            "head-probe",
            "--steps",
            "5",
            "--rates",
            "1e-3",
            "--batch",
            "2",
            "--held-out",
            "8",
            "--out",
            str(t / "r.json"),
        ],
        result=lambda t: t / "r.json",
        work=lambda r: r["steps"] * len(r["rates"]),
        needs_wikiactors=True,
    ),
    # The README's test command on one small test file (SQLite only): the benchmark's pass
    # parser and its JSON, not the suite's time.
    "test_suite_time": Smoke(
        process="runs the README's test command, a pytest of its own",
        args=lambda t: ["--output", str(t / "r.json"), "--", "tests/test_json_lines.py"],
        result=lambda t: t / "r.json",
        work=lambda r: len(r["passes"]) * (r["exit_status"] == 0),
        # Inside this run: never reinstall the .venv the running tests import from.
        env={
            "TEST_SKIP_PG": "1",
            "TEST_SKIP_LINT": "1",
            "TEST_SKIP_SETUP": "1",
            "TEST_WORKERS": "1",
        },
    ),
    "enrolment_burst": Smoke(
        process=SERVERS,
        args=lambda t: [
            "--participants",
            "4",
            "--threads",
            "2",
            "--rounds",
            "1",
            "--out",
            str(t / "r.json"),
        ],
        result=lambda t: t / "r.json",
        work=lambda r: r["rounds"][0]["enrolled"],
        needs="postgres",
    ),
    "server_floor": Smoke(
        process=SERVERS,
        args=lambda t: [
            "--requests",
            "20",
            "--clients",
            "2",
            "--rounds",
            "1",
            "--workers",
            "1",
            "--out",
            str(t / "r.json"),
        ],
        result=lambda t: t / "r.json",
        work=lambda r: sum(run["requests"] for runs in r["rounds"].values() for run in runs),
        needs="postgres",
    ),
    "load_intruder": Smoke(
        process=SERVERS,
        # One warm-up participant (20 by default) and no pauses between a participant's
        # forms (0.5-2 s each): the smoke run proves the path, not the pacing (issue 50).
        args=lambda t: [
            "--participants",
            "3",
            "--items",
            "2",
            "--warmup",
            "1",
            "--think-ms",
            "0:0",
            "--out",
            str(t / "r.json"),
        ],
        result=lambda t: t / "r.json",
        work=lambda r: r["completed"] * (r["errors"] == 0) * (r["violations"] == 0),
        needs="postgres",
    ),
    "sqlite_import_contention": Smoke(
        process=OWN_DATABASE,
        args=lambda t: ["--mb", "0.05", "--participants", "2", "--out", str(t / "r.json")],
        result=lambda t: t / "r.json",
        work=lambda r: r["rows"] * min(m["participant_flows"] for m in r["modes"]),
    ),
}


def _run(name: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    # A benchmark is a program of its own, not a part of this pytest run (xdist's variables
    # would make a nested pytest think it is one of this run's workers).
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")} | env
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), *args],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _call(
    name: str, args: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys
) -> subprocess.CompletedProcess:
    """Run benchmarks/<name>.py's main() here, as `python benchmarks/<name>.py args` would.

    Its exit status and output come back as a child process's would. What a script changes
    for the process is put back afterwards: the environment, `sys.path` and `sys.argv`, the
    working directory, torch's thread count, the random generators it seeds (Python's,
    NumPy's, torch's) and transformers' log level.
    """
    import numpy as np
    import torch
    from transformers.utils import logging as hf_logging

    path = BENCHMARKS / f"{name}.py"
    environment = dict(os.environ)
    threads, verbosity = torch.get_num_threads(), hf_logging.get_verbosity()
    states = (random.getstate(), np.random.get_state(), torch.get_rng_state())
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "argv", [str(path), *args])
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # sys.path as it was, after the run
    monkeypatch.chdir(REPO)
    try:
        spec = importlib.util.spec_from_file_location(f"benchmark_{name}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look it up
        spec.loader.exec_module(module)
        try:
            status = module.main()
        except SystemExit as exit:
            status = exit.code
    finally:
        os.environ.clear()
        os.environ.update(environment)
        torch.set_num_threads(threads)
        hf_logging.set_verbosity(verbosity)
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])
    out, err = capsys.readouterr()
    if isinstance(status, str):  # SystemExit("message"): Python prints it and exits 1
        err, status = err + status + "\n", 1
    return subprocess.CompletedProcess([str(path), *args], status or 0, out, err)


def _scripts() -> set[str]:
    """Return the benchmarks that run as scripts (a `__main__` block), not helper modules."""
    names = set()
    for path in BENCHMARKS.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body
        ):
            names.add(path.stem)
    return names


# Benchmarks that read another benchmark's output or a loaded demo: run as chains below.
CHAINED = {
    "human_vs_machine_textwash": "test_human_vs_machine_and_the_prediction_fitted_on_it",
    "predicted_human_fit": "test_human_vs_machine_and_the_prediction_fitted_on_it",
    "demo_first_start": "test_the_demo_first_start_and_the_demo_benchmarks_on_its_demo",
    "risk_check_demo": "test_the_demo_first_start_and_the_demo_benchmarks_on_its_demo",
    "researcher_pages": "test_the_demo_first_start_and_the_demo_benchmarks_on_its_demo",
    "llm_paper002": "test_llm_paper002_through_the_loopback_endpoint",
    "guarded_anonymization": "test_guarded_anonymization_and_its_residuals",
    "guard_residuals": "test_guarded_anonymization_and_its_residuals",
    "tab_crosscheck": "test_tab_crosscheck_against_tabs_own_evaluation",
    "process_start": "test_a_django_process_starts_without_the_heavy_libraries",
}


# Benchmarks whose smoke run lives beside the code they measure.
ELSEWHERE = {
    "prolific_replay": "tests/intruder/prolific/test_replay_benchmark.py",
    "intruder_bots": "tests/browser/test_intruder_bots_smoke.py",
}


def test_every_benchmark_script_has_a_smoke_run():
    assert _scripts() - set(SMOKES) - set(CHAINED) - set(ELSEWHERE) == set()
    for module in ELSEWHERE.values():
        assert (REPO / module).is_file(), module


@pytest.mark.parametrize("name", sorted(SMOKES))
def test_the_benchmark_runs_tiny_and_reports_work(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    smoke = SMOKES[name]
    if smoke.needs_shared_data:
        _require(textwash_study_dir())
    if smoke.needs_wikiactors:
        _require(tria_wikiactors_dir())
    if smoke.needs == "postgres" and not POSTGRES_BINARIES:
        pytest.skip(
            "PostgreSQL's server binaries are not installed (scripts/test.sh installs them)"
        )
    if smoke.process:
        run = _run(name, smoke.args(tmp_path), smoke.env)
    else:
        run = _call(name, smoke.args(tmp_path), smoke.env, monkeypatch, capsys)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert smoke.work(_json(smoke.result(tmp_path))) > 0


def test_a_django_process_starts_without_the_heavy_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    """A start (settings, apps, URLconf, job runners) loads no plotting, statistics or model
    library: each loads where it draws or computes. scipy.stats, matplotlib, wordfreq and
    drf-spectacular at import time cost every command, worker and server 1.3 of its 2.3 CPU s
    (issue 50)."""
    _check(
        _call(
            "process_start",
            ["--repeats", "1", "--out", str(tmp_path / "r.json")],
            {},
            monkeypatch,
            capsys,
        )
    )
    result = _json(tmp_path / "r.json")
    assert len(result["cpu_s"]) == 1 and result["cpu_s"][0] > 0
    assert result["heavy_at_start"] == [], result["heavy_at_start"]


def _check(run: subprocess.CompletedProcess) -> None:
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]


def test_human_vs_machine_and_the_prediction_fitted_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    """human_vs_machine_textwash sets Django up on a database of its own: a child process;
    the fit reads its output in this one."""
    _require(textwash_study_dir())
    out = tmp_path / "hvm"
    _check(
        _run(
            "human_vs_machine_textwash",
            [
                "--out",
                str(out),
                "--attacks",
                "tfidf",
                "--limit",
                "20",  # every 20th description: 54 texts a study, 25 candidates for the fit
                "--methods",
                "textwash",
                "--ladder",
                "5",
                "--folds",
                "2",
            ],
            {},
        )
    )
    summary = _json(out / "summary.json")
    assert sum(sum(by_method.values()) for by_method in summary["texts_by_study"].values()) > 0
    _check(
        _call(
            "predicted_human_fit",
            ["--ladders", str(out), "--out", str(tmp_path / "f.json")],
            {},
            monkeypatch,
            capsys,
        )
    )
    assert _json(tmp_path / "f.json")["n_candidates"] > 0


def test_the_demo_first_start_and_the_demo_benchmarks_on_its_demo(tmp_path: Path):
    """The README's first command in a fresh clone (minutes, not seconds, and the one way to
    know it still serves), then the demo benchmarks on the demo it loaded.

    A subprocess by nature: it clones the checkout and runs scripts/demo.sh, which makes a
    .venv and starts the site. Its demo is the one the benchmarks read (it was loaded a second
    time by `manage.py load_demo` before issue 50). `SETUP_BYTECODE=lazy` leaves the clone's
    bytecode to its imports, as scripts/test.sh does: compiling every installed file up front
    is what a first start measures, not what proves that the script still serves.
    """
    first = tmp_path / "first_start.json"
    workdir = tmp_path / "clones"  # the kept clone lands here (TMPDIR), removed at the end
    workdir.mkdir()
    # As a researcher's demo.sh loads it: with its stored report run and pages (the tests'
    # default leaves reports to their first view).
    env = {"SETUP_BYTECODE": "lazy", "INTRUDER_PREPARE_REPORTS": "1", "TMPDIR": str(workdir)}
    try:
        _check(
            _run("demo_first_start", ["--timeout", "900", "--keep", "--output", str(first)], env)
        )
        started = _json(first)
        assert started["served_after_s"] > 0
        _the_demo_benchmarks(Path(started["clone"]) / "var", tmp_path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)  # the clone's .venv: hundreds of MB


def _the_demo_benchmarks(var: Path, tmp_path: Path) -> None:
    """Run risk_check_demo and researcher_pages on the demo loaded in `var`."""
    risk = tmp_path / "risk.json"
    _check(
        _run(
            "risk_check_demo",
            ["--out", str(var), "--keep-db", "--repeats", "0", "--output", str(risk)],
            {},
        )
    )
    assert _json(risk)["first_check"]["results"] > 0
    pages = tmp_path / "pages.json"
    _check(
        _run(
            "researcher_pages",
            [
                "--var-dir",
                str(var),
                "--repeats",
                "1",
                "--no-server",
                "--no-refresh",
                "--only",
                "study list,risk,analysis",
                "--output",
                str(pages),
            ],
            {},
        )
    )
    statuses = [page["status"] for page in _json(pages)["test_client"]["pages"].values()]
    assert statuses and all(status == 200 for status in statuses)


def test_llm_paper002_through_the_loopback_endpoint(
    tmp_path: Path, llm_settings, llm_server, monkeypatch: pytest.MonkeyPatch, capsys
):
    _require(tria_wikiactors_dir())
    shared = tmp_path / "shared"
    tiny = tiny_wikiactors(shared / "tria_wikiactors")
    rows = json.loads((tiny / "WikiActors_50_eval.json").read_text(encoding="utf-8"))
    # The model masks each person's name (the tiny random model itself answers nonsense).
    llm_server.queue_answers(*[json.dumps(row["name"].split()) for row in rows])
    env = {
        "SHARED_DATA_DIR": str(shared),
        "LLM_BASE_URL": llm_settings.base_url,
        "LLM_MODEL": llm_settings.model,
        "LLM_API_KEY": llm_settings.api_key,
        "LLM_CACHE_DIR": llm_settings.cache_dir,
        "LLM_MAX_RETRIES": "0",
    }
    args = ["--prompts", "paper002", "--attacks", "tfidf", "--out", str(tmp_path / "out")]
    _check(_call("llm_paper002", args, env, monkeypatch, capsys))
    trir = _json(tmp_path / "out" / "llm_paper002.json")["trir_by_attack"]["tfidf"]
    assert sum(column["n"] for column in trir.values()) > 0


def test_guarded_anonymization_and_its_residuals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    _require(textwash_study_dir())
    run = tmp_path / "run"
    args = ["--out", str(run), "--folds", "2", "--limit-per-person", "3", "--no-construct-loss"]
    tiny = ["--eval-attacks", "tfidf", "--guard-attacks", "tfidf", "--ks", "2"]
    _check(_call("guarded_anonymization", args + tiny, {}, monkeypatch, capsys))
    summary = _json(run / "summary.json")
    assert summary["texts"] > 0 and "guarded_k2" in summary["methods"]
    residuals = tmp_path / "residuals.json"
    _check(
        _call(
            "guard_residuals",
            [
                "--run",
                str(run),
                "--method",
                "guarded_k2",
                "--folds",
                "2",
                "--permutations",
                "5",
                "--out",
                str(residuals),
            ],
            {},
            monkeypatch,
            capsys,
        )
    )
    assert _json(residuals)["texts"] == summary["texts"]


def test_tab_crosscheck_against_tabs_own_evaluation(tmp_path: Path):
    from anonymize.annotations.formats import system_output_to_json, write_tab
    from anonymize.annotations.schema import AnnotatedDocument, Mention

    evaluation = os.environ.get("TAB_EVALUATION_PY")
    if not evaluation:
        pytest.skip("needs TAB's evaluation.py from its repository (set TAB_EVALUATION_PY)")
    text = "Orla Brennigan flew from Cork to Hobart in 1999."
    gold = [
        AnnotatedDocument(
            "d1",
            text,
            {
                "a1": [
                    Mention(0, 14, "PERSON", "e1", "DIRECT"),
                    Mention(25, 28, "LOC", "e2"),
                    Mention(32, 38, "LOC", "e3"),
                ]
            },
            dataset_type="test",
        )
    ]
    write_tab(gold, tmp_path / "gold.json")
    system = system_output_to_json({"d1": [(0, 14), (25, 28)]})
    (tmp_path / "system.json").write_text(json.dumps(system), encoding="utf-8")
    args = [str(tmp_path / "gold.json"), str(tmp_path / "system.json"), "--tab-evaluation",
            evaluation, "--out", str(tmp_path / "r.json")]  # fmt: skip
    _check(_run("tab_crosscheck", args, {}))
    assert _json(tmp_path / "r.json")["measures"]


def test_a_benchmark_that_measured_nothing_exits_3_and_writes_nothing(tmp_path: Path):
    # A child process on purpose: the exit status a shell or CI sees, not a SystemExit caught.
    empty = tmp_path / "data"
    empty.mkdir()
    for name in ("study1.jsonl", "study2.jsonl"):
        (empty / name).write_text("")
    run = _run("leak_checks", ["--data", str(empty), "--out", str(tmp_path / "r.json")], {})
    assert run.returncode == NO_WORK_EXIT
    assert "measured nothing (texts = 0)" in run.stderr
    assert not (tmp_path / "r.json").exists()

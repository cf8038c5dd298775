"""Participants on the embedded SQLite default while a large import runs.

The issue: during a realistic 20 MB import, 1 of 6 participant sign-ups got a 500 ("database
is locked"), and the worker died on its own after a 41 MB import. This runs a 20 MB import
(made-up descriptions, written here) into one study of a fresh file-backed SQLite database
while participant threads enrol, consent, read the instructions and claim a text in another
study, and reports their errors and latencies, and the longest write transaction of the
import. Three ways of writing: as shipped (bulk inserts, WRITE_BATCH_ROWS rows per
transaction), bulk inserts all in one transaction, and one INSERT per row in one transaction
(the import before this change). The database settings are the shipped ones (WAL, BEGIN
IMMEDIATE, 20 s busy timeout) in all three; participants run as threads of the same process.

    flock /tmp/heavy.lock python benchmarks/sqlite_import_contention.py \
        [--mb 20] [--participants 4] [--out benchmarks/results/sqlite_import_contention.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SENTENCE = (
    "she grew up near the harbour and later taught chemistry at a small college before moving "
    "abroad with her two children where she opened a bakery known for rye bread"
)
WORDS = SENTENCE.split()


def synthetic_jsonl(megabytes: float, seed: int = 7) -> str:
    """Return JSONL description rows (about 2,000 characters each) adding up to `megabytes`."""
    import random

    rng = random.Random(seed)
    lines, size, n = [], 0, 0
    while size < megabytes * 1_000_000:
        text = " ".join(rng.choice(WORDS) for _ in range(330))
        row = {"id": f"d{n}", "text": text, "person": f"person {n % 40}", "type": "fictitious"}
        line = json.dumps(row)
        lines.append(line)
        size += len(line) + 1
        n += 1
    return "\n".join(lines) + "\n"


def per_row_writes(study, batch, stored, report, created) -> None:
    """The import's writes before batching: one INSERT per row, all in one transaction."""
    from intruder.models import Description

    for item in batch:
        description = Description.objects.create(
            study=study, target=stored[item.target_key], external_id=item.external_id,
            text=item.text,
        )  # fmt: skip
        created.append(description.pk)
        report.descriptions_created += 1


def run_mode(
    batch_rows: int | None, content: str, participants: int, per_row: bool = False
) -> dict:
    from django.db import connection, connections
    from django.test import Client
    from django.urls import reverse

    from intruder.exchange import imports
    from intruder.models import PersonGroup, Study
    from tests.intruder.factories import make_study, make_texts

    target_study = make_study(kind=Study.Kind.COLLECTION, is_open=False)
    served = make_study(kind=Study.Kind.INTRUDER, items_per_participant=1, judgments_per_text=50)
    make_texts(study=served, count=20, group=PersonGroup.FICTITIOUS)
    connection.close()

    original_batch = imports.WRITE_BATCH_ROWS
    imports.WRITE_BATCH_ROWS = batch_rows or 10**9
    real_write = per_row_writes if per_row else imports._write_descriptions
    holds: list[float] = []

    def timed_write(*args, **kwargs):
        started = time.perf_counter()
        try:
            return real_write(*args, **kwargs)
        finally:
            holds.append(time.perf_counter() - started)

    original_write = imports._write_descriptions
    imports._write_descriptions = timed_write
    done = threading.Event()
    results: list[tuple[float, int, str]] = []
    lock = threading.Lock()
    import_report: dict = {}

    def importer() -> None:
        started = time.perf_counter()
        try:
            report = imports.import_study_data(study=target_study, content=content, fmt="jsonl")
            import_report.update(report.as_dict(), error="")
        except Exception as error:  # reported, not raised: the participants are measured
            import_report["error"] = f"{type(error).__name__}: {error}"
        import_report["seconds"] = round(time.perf_counter() - started, 2)
        connections.close_all()
        done.set()

    def participant(index: int) -> None:
        client = Client(raise_request_exception=False)
        n = 0
        while not done.is_set():
            pid = f"P{index}X{n}"
            n += 1
            started = time.perf_counter()
            url = reverse("participant-entry", kwargs={"slug": served.slug})
            response = client.get(f"{url}?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID=s")
            status, note = response.status_code, ""
            if status == 302:
                token = response.url.rstrip("/").rsplit("/", 1)[-1]
                for name in ("participant-consent", "participant-instructions"):
                    r = client.post(reverse(name, kwargs={"token": token}), {"decision": "agree"})
                    status = max(status, r.status_code if r.status_code >= 400 else 0) or 302
                home = client.get(reverse("participant-home", kwargs={"token": token}))
                if home.status_code >= 400:
                    status = home.status_code
            if status >= 500:
                note = "server error"
            with lock:
                results.append((time.perf_counter() - started, status, note))
            time.sleep(0.05)
        connections.close_all()

    # Warm up (URLconf, views, templates load on the first request), then measure.
    warm = Client().get(
        reverse("participant-entry", kwargs={"slug": served.slug}) + "?PROLIFIC_PID=WARM"
    )
    assert warm.status_code == 302, warm.status_code
    results.clear()
    threads = [threading.Thread(target=importer)] + [
        threading.Thread(target=participant, args=(i,)) for i in range(participants)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    imports._write_descriptions = original_write
    imports.WRITE_BATCH_ROWS = original_batch
    latencies = sorted(r[0] for r in results)
    return {
        "writes": (
            "one INSERT per row, one transaction (before)"
            if per_row
            else f"bulk, {batch_rows} rows per transaction"
            if batch_rows
            else "bulk, all rows in one transaction"
        ),
        "import": import_report,
        "longest_write_transaction_s": round(max(holds), 3) if holds else None,
        "write_transactions": len(holds),
        "participant_flows": len(results),
        "participant_server_errors": sum(r[1] >= 500 for r in results),
        "participant_flow_p50_s": round(statistics.median(latencies), 3) if latencies else None,
        "participant_flow_max_s": round(latencies[-1], 3) if latencies else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=20.0, help="Size of the import file.")
    parser.add_argument("--participants", type=int, default=4, help="Participant threads.")
    parser.add_argument(
        "--out", type=Path, default=REPO / "benchmarks/results/sqlite_import_contention.json"
    )
    args = parser.parse_args(argv)
    var = tempfile.mkdtemp(prefix="intruder-sqlite-bench-")
    os.environ.update(
        INTRUDER_VAR_DIR=var,
        DJANGO_SETTINGS_MODULE="intruder.settings",
        INTRUDER_ENROLMENT_RATE="",
    )
    os.environ.pop("DATABASE_URL", None)
    import warnings

    import django

    warnings.filterwarnings("ignore", message="No directory at")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    content = synthetic_jsonl(args.mb)
    modes = [
        run_mode(500, content, args.participants),
        run_mode(None, content, args.participants),
        run_mode(None, content, args.participants, per_row=True),
    ]
    from did_work import require_work

    require_work(
        "sqlite_import_contention",
        rows=content.count("\n"),
        descriptions_imported=min(m["import"].get("descriptions_created", 0) for m in modes),
        participant_flows=min(m["participant_flows"] for m in modes),
    )
    result = {
        "file_mb": round(len(content) / 1e6, 1),
        "rows": content.count("\n"),
        "participant_threads": args.participants,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "load_avg_before": os.getloadavg()[0],
        "modes": modes,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

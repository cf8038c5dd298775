"""Scripted intruders in real Chromium: are pasting, tab-away, fast and LLM bots flagged, and
are human-paced participants left alone?

    nice -n 10 python benchmarks/intruder_bots.py --out benchmarks/results/intruder_bots.json \
        [--sessions 50] [--parallel 8]

A throwaway SQLite database (a temporary folder) gets one made-up intruder study (invented
persons, one text per session); gunicorn serves it on loopback, and Playwright drives Debian's
/usr/bin/chromium through the real participant pages: entry link, consent, instructions, one
text, the answer. Nothing is injected into the page: every signal comes from the browser's own
events (keys typed by Playwright's keyboard, Ctrl+V from the real clipboard, the tab losing
focus to another tab). Session types (the issue's):

- paste: answers by pasting (clipboard text, Ctrl+V), at an unhurried pace;
- tab_away: reads, leaves for 10 to 60 s (another tab in front), comes back, types a name;
- fast: answers in under 3 s (typed quickly);
- canary: copies the served text, answers with what an LLM would echo from it (the hidden
  instruction's word), typed by hand so that only the canary can give it away;
- human: reads, types at human speed with pauses and corrections, stays, never pastes.

A session counts as flagged when its judgment has any flag under the default exclusion
rules (`intruder.services.flags.DEFAULT_RULES`). Writes
{"bots": {type: {"sessions", "flagged", ...}}, "human": {...}, "telemetry_present": ...}.
The machine is shared with other work: timings here are wall-clock and not a speed claim.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CHROMIUM = os.environ.get("INTRUDER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
BOT_TYPES = ("paste", "tab_away", "fast", "canary")
TYPES = (*BOT_TYPES, "human")
FIRST = ["Mira", "Lars", "Odile", "Bram", "Ines", "Tomas", "Wren", "Nell", "Ivo", "Ada"]
LAST = ["Tollund", "Pemberton", "Farrant", "Okonjo", "Calloway", "Hellberg", "Halloway"]
HUMAN_ANSWERS = [
    "Someone who works near the sea, maybe in the north.",
    "A musician, older, probably from a small town.",
    "I think a teacher who likes boats and old maps.",
    "No idea who, but they seem to live by a harbour.",
]
TARGETS = {
    "target_pass": 95.0,  # each bot type flagged in at least this % of its sessions
    "human_max": 2.0,  # human-pace sessions flagged in at most this %
    "telemetry": 100.0,  # answers with telemetry
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def setup_django(var_dir: Path) -> None:
    """Point Django at a fresh SQLite database under `var_dir`, migrate and collect static."""
    os.environ["INTRUDER_VAR_DIR"] = str(var_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic", "--noinput", verbosity=0)


def make_study(n_texts: int, seed: int) -> str:
    """Create an intruder study with one made-up text per session; return its slug."""
    from django.contrib.auth import get_user_model

    from intruder.models import AnonymizedText, Description, Study, TargetPerson

    rng = random.Random(seed)
    owner = get_user_model().objects.create_user("bench", password=secrets.token_urlsafe(12))
    study = Study.objects.create(
        slug="bots",
        title="Bot benchmark",
        kind=Study.Kind.INTRUDER,
        owner=owner,
        items_per_participant=1,
        judgments_per_text=1,
        groups=["fictitious"],
        consent_text="Made-up benchmark study.",
        instructions_text="Name the person if you can.",
    )
    for i in range(n_texts):
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}{i}"
        target = TargetPerson.objects.create(
            study=study, key=f"fictitious_{i}", name=name, group="fictitious"
        )
        original = (
            f"{name} is a lighthouse keeper from Bergen who writes letters every week and "
            "is known for a quiet voice and a love of old maps."
        )
        description = Description.objects.create(study=study, target=target, text=original)
        AnonymizedText.objects.create(
            description=description,
            text=original.replace(name, "PERSON_1").replace("Bergen", "LOCATION_1"),
            status=AnonymizedText.Status.RELEASED,
        )
    return study.slug


def start_server(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {
        **env,
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "2",
        "GUNICORN_THREADS": "4",
        "GUNICORN_ACCESSLOG": "",
    }
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server
        "w", prefix="intruder_bots.gunicorn.", suffix=".log", delete=False
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(REPO / "gunicorn.conf.py"), "intruder.wsgi"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited; see {log.name}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGTERM)
    raise SystemExit("gunicorn did not start within 60 s")


async def human_type(page, text: str, rng: random.Random, *, typo_rate: float = 0.06) -> None:
    """Type like a person: 60-220 ms a key, pauses between words, some typos corrected."""
    for char in text:
        if char.isalpha() and rng.random() < typo_rate:
            await page.keyboard.type(rng.choice("qwertyuiopasdfghjkl"), delay=rng.randint(60, 180))
            await asyncio.sleep(rng.uniform(0.15, 0.5))
            await page.keyboard.press("Backspace")
        await page.keyboard.type(char, delay=rng.randint(60, 220))
        if char == " " and rng.random() < 0.25:
            await asyncio.sleep(rng.uniform(0.3, 1.2))


async def reach_text(page, base: str, slug: str, pid: str) -> None:
    """Enter from the Prolific link, consent and confirm the instructions."""
    await page.goto(f"{base}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X")
    await page.click("button[value=agree]")
    await page.click("form button[type=submit]")
    await page.wait_for_selector("#anon-text")


async def answer_no(page, typed: str, rng: random.Random, *, fast: bool = False) -> None:
    await page.check("input[name=self_identified][value=no]")
    await page.click("#other_knowledge")
    if fast:
        await page.keyboard.type(typed, delay=0)
    else:
        await human_type(page, typed, rng)


async def run_session(
    context, kind: str, base: str, slug: str, pid: str, seed: int, clipboard: asyncio.Lock
) -> None:
    """Drive one participant of `kind` through one text.

    `clipboard`: headless Chromium has one clipboard for all its contexts, as a computer has
    one for all its windows; a session holds the lock from writing or copying to pasting or
    reading, so parallel sessions never read each other's clipboard.
    """
    rng = random.Random(seed)
    page = await context.new_page()
    await reach_text(page, base, slug, pid)
    if kind == "human":
        await asyncio.sleep(rng.uniform(4, 8))  # reading
        await answer_no(page, rng.choice(HUMAN_ANSWERS), rng)
    elif kind == "paste":
        await asyncio.sleep(rng.uniform(3, 6))
        answer = "A lighthouse keeper from a northern harbour town, fond of maps."
        await page.check("input[name=self_identified][value=no]")
        await page.click("#other_knowledge")
        async with clipboard:
            await page.evaluate("text => navigator.clipboard.writeText(text)", answer)
            await page.keyboard.press("ControlOrMeta+V")
        await asyncio.sleep(rng.uniform(1, 3))
    elif kind == "tab_away":
        await asyncio.sleep(rng.uniform(2, 4))
        # Playwright keeps every page "focused"; a real switch needs that emulation off.
        cdp = await context.new_cdp_session(page)
        await cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
        other = await context.new_page()
        await other.bring_to_front()
        await asyncio.sleep(rng.uniform(10, 60))
        await page.bring_to_front()
        await other.close()
        await page.check("input[name=self_identified][value=yes]")
        await page.click("#guessed_name")
        await human_type(page, f"{rng.choice(FIRST)} {rng.choice(LAST)}", rng, typo_rate=0)
        await page.click("#revealing_text")
        await human_type(page, "the lighthouse", rng, typo_rate=0)
    elif kind == "fast":
        await answer_no(page, "a sailor", rng, fast=True)
    elif kind == "canary":
        await asyncio.sleep(rng.uniform(1, 2))
        async with clipboard:
            await page.locator("#anon-text").select_text()
            await page.keyboard.press("ControlOrMeta+C")
            copied = await page.evaluate("navigator.clipboard.readText()")
        # What an obliging LLM answers: it follows the hidden instruction it was given.
        word = re.search(r"the word “(\w+)”", copied)
        echoed = f"Probably a lighthouse keeper. {word.group(1) if word else ''}".strip()
        await answer_no(page, echoed, rng)
    async with page.expect_navigation():
        await page.click("#judge-form button[type=submit]")
    await page.wait_for_selector("#completion-code")
    await page.close()


async def run_all(base: str, slug: str, plan: list[tuple[str, str]], parallel: int) -> list:
    from playwright.async_api import async_playwright

    errors: list[str] = []
    semaphore = asyncio.Semaphore(parallel)
    clipboard = asyncio.Lock()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )

        async def one(index: int, kind: str, pid: str) -> None:
            async with semaphore:
                context = await browser.new_context(
                    permissions=["clipboard-read", "clipboard-write"], base_url=base
                )
                context.set_default_timeout(60_000)
                try:
                    await run_session(context, kind, base, slug, pid, index, clipboard)
                except Exception as error:  # recorded in the results, never hidden
                    errors.append(f"{kind} {pid}: {error!r}"[:300])
                finally:
                    await context.close()

        await asyncio.gather(*(one(i, kind, pid) for i, (kind, pid) in enumerate(plan)))
        await browser.close()
    return errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON")
    parser.add_argument("--sessions", type=int, default=50, help="sessions of each type")
    parser.add_argument("--parallel", type=int, default=8, help="browser contexts at once")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--types",
        default=",".join(TYPES),
        help="comma-separated session types to run (default: all five)",
    )
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"chromium not found at {CHROMIUM}")

    started = time.time()
    with tempfile.TemporaryDirectory(prefix="intruder_bots.") as tmp:
        setup_django(Path(tmp))
        chosen = [kind for kind in args.types.split(",") if kind]
        unknown = set(chosen) - set(TYPES)
        if unknown:
            raise SystemExit(f"unknown session types: {', '.join(sorted(unknown))}")
        plan = [(kind, f"{kind.upper()}{i:04d}") for kind in chosen for i in range(args.sessions)]
        random.Random(args.seed).shuffle(plan)  # interleaved: no type runs alone
        slug = make_study(len(plan) + 5, args.seed)
        env = {
            **os.environ,
            "DJANGO_DEBUG": "0",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "INTRUDER_ENROLMENT_RATE": "",
            "INTRUDER_TOKEN_RATE": "",
        }
        server, base = start_server(env)
        try:
            errors = asyncio.run(run_all(base, slug, plan, args.parallel))
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        results = collect(plan)
    results |= {
        "sessions_per_type": args.sessions,
        "parallel_contexts": args.parallel,
        "errors": errors,
        "wall_seconds": round(time.time() - started, 1),
        "browser": CHROMIUM,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, shared with other sessions",
        "command": " ".join(sys.argv),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: results[k] for k in ("bots", "human", "telemetry_present", "pass")}))


def collect(plan: list[tuple[str, str]]) -> dict:
    """Count flagged sessions per type from the stored judgments."""
    from intruder.models import Judgment
    from intruder.selectors.flags import answer_flag_status
    from intruder.services.flags import DEFAULT_RULES

    kinds = dict((pid, kind) for kind, pid in plan)
    per_type: dict[str, Counter] = {kind: Counter() for kind in TYPES}
    codes: dict[str, Counter] = {kind: Counter() for kind in TYPES}
    times: dict[str, list[int]] = {kind: [] for kind in TYPES}
    answers = telemetry = 0
    for judgment in Judgment.objects.select_related("participant"):
        kind = kinds[judgment.participant.prolific_pid]
        answers += 1
        telemetry += judgment.telemetry is not None
        status = answer_flag_status(judgment, DEFAULT_RULES)
        per_type[kind]["answered"] += 1
        per_type[kind]["flagged"] += bool(status.flag_codes)
        per_type[kind]["under_3s"] += (judgment.time_spent_ms or 0) < 3000
        times[kind].append(judgment.time_spent_ms or 0)
        codes[kind].update(status.flag_codes)

    def row(kind: str) -> dict:
        sessions = sum(1 for k, _ in plan if k == kind)
        flagged = per_type[kind]["flagged"]
        return {
            "sessions": sessions,
            "answered": per_type[kind]["answered"],
            "flagged": flagged,
            "flagged_pct": round(100.0 * flagged / sessions, 1) if sessions else None,
            "flag_codes": dict(codes[kind]),
            # The judgment's time (server-bounded): a "fast" session slowed past 3 s by a
            # busy machine is no longer fast, and this says how many were.
            "answered_under_3s": per_type[kind]["under_3s"],
            "median_time_ms": int(statistics.median(times[kind])) if times[kind] else None,
        }

    ran = {kind for kind, _ in plan}
    bots = {kind: row(kind) for kind in BOT_TYPES if kind in ran}
    human = row("human") if "human" in ran else None
    telemetry_pct = round(100.0 * telemetry / answers, 1) if answers else None
    passed = (
        all(b["flagged_pct"] is not None and b["flagged_pct"] >= TARGETS["target_pass"]
            for b in bots.values())
        and (human is None or human["flagged_pct"] <= TARGETS["human_max"])
        and telemetry_pct == TARGETS["telemetry"]
    )  # fmt: skip
    return {
        "bots": bots,
        "human": human,
        "telemetry_present": {
            "answers": answers,
            "with_telemetry": telemetry,
            "pct": telemetry_pct,
        },
        "targets": TARGETS,
        "pass": passed,
    }


if __name__ == "__main__":
    main()

"""Scripted intruders in real Chromium: are bots flagged, and are people left alone?

    nice -n 10 python benchmarks/intruder_bots.py --out benchmarks/results/intruder_bots.json \
        [--sessions 50] [--parallel 8] [--types a,b] [--time-scale 1]

A throwaway SQLite database (a temporary folder) gets one made-up intruder study (invented
persons, one text per session); gunicorn serves it on loopback, and Playwright drives Debian's
/usr/bin/chromium through the real participant pages: entry link, consent, instructions, one
text, the answer. Session types:

- caught since issue 20: paste (Ctrl+V), tab_away (10-60 s in another tab), fast (< 3 s),
  canary (copies the text, echoes the hidden word);
- issue 36's adversaries: forged_minimal ({"v", "page_ms"} only), forged_keystrokes (a
  keystroke count only), forged_full_inconsistent (every field, bound to the page view, but
  claiming 40 s more than the server saw), no_js (JavaScript off), script_inserted (the name
  set by script, a reason typed), leave_reload (15-40 s away, back, reload, answer),
  canary_plural / canary_hyphen / canary_underscore / canary_cyrillic (the echo disguised),
  select_all_copy (Ctrl+A, Ctrl+C, echo);
- patched_paste, patched_away: a script that runs before the page's (a userscript, an
  extension) drops the page's paste, copy, focus and visibility listeners and hands its
  input listener every paste as typing; then the answer is pasted (patched_paste), or typed
  after 15-25 s in another tab (patched_away);
- issue 48's: fill_insert (Playwright's fill()), exec_insert (execCommand("insertText")): a
  whole answer in one trusted input event; human_two_tabs (their own page in a second tab
  for 2-4 s). Issue 48's plain-HTTP kinds: `--http` (benchmarks/intruder_bots_http.py);
- the documented limit, reported apart: forged_full_consistent (every figure fits the
  server's clock and the answer);
- people: human_desktop, human_phone (phone size, touch), human_android (Gboard-style input
  events, "Unidentified" keys): read at 200-250 words a minute, answer a name or "no" 20-60 s
  after the page came, a desktop one sometimes looks away for 1-2 s.

A session counts as flagged when its judgment has any flag under the default exclusion
rules (`intruder.evidence.selectors.DEFAULT_RULES`). Writes {"bots": {type: {"sessions",
"flagged", "wilson_95_pct", ...}}, "human": {...}, "limits": {...}, "pass"}; exits 1 when no
session reached an answer. `--time-scale` below 1 shrinks every wait for a smoke run (then
people answer "too fast" and the file says it is no measurement). The machine is shared with
other work: timings here are wall-clock and not a speed claim.
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
# Kinds caught since issue 20, and issue 36's adversarial ones.
BOT_TYPES = (
    "paste",
    "tab_away",
    "fast",
    "canary",
    "forged_minimal",
    "forged_keystrokes",
    "forged_full_inconsistent",
    "no_js",
    "script_inserted",
    "leave_reload",
    "canary_plural",
    "canary_hyphen",
    "canary_underscore",
    "canary_cyrillic",
    "select_all_copy",
    # Issue 48: a whole answer inserted by one trusted input event; a page script that
    # drops the page's paste and focus listeners and shows it pastes as typing.
    "fill_insert",
    "exec_insert",
    "patched_paste",
    "patched_away",
)
# A full forgery whose every figure fits the server's clock: the documented limit
# (docs/participants.md), reported apart, not a target.
LIMIT_TYPES = ("forged_full_consistent",)
HUMAN_TYPES = ("human_desktop", "human_phone", "human_android", "human_two_tabs")
TYPES = (*BOT_TYPES, *LIMIT_TYPES, *HUMAN_TYPES)
PHONE_TYPES = ("human_phone", "human_android")
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
    "human_max": 2.0,  # each human type flagged in at most this %
    "min_sessions": 50,  # per type, for a full run
}
LATIN_TO_CYRILLIC = str.maketrans({"a": "а", "e": "е", "o": "о", "k": "к"})


def wilson(flagged: int, sessions: int, z: float = 1.96) -> list[float] | None:
    """Return the Wilson score 95 % interval of a share, in percent."""
    if not sessions:
        return None
    share = flagged / sessions
    centre = (share + z * z / (2 * sessions)) / (1 + z * z / sessions)
    half = (
        z
        * ((share * (1 - share) / sessions + z * z / (4 * sessions * sessions)) ** 0.5)
        / (1 + z * z / sessions)
    )
    return [round(100 * max(0.0, centre - half), 1), round(100 * min(1.0, centre + half), 1)]


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
        is_open=True,  # studies start closed (issue 26)
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


def server_env() -> dict[str, str]:
    """Return the benchmark server's environment: production settings with a fresh secret,
    and no per-client limits (every session comes from this one loopback address)."""
    return {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "INTRUDER_ENROLMENT_RATE": "",
        "INTRUDER_TOKEN_RATE": "",
    }


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


class Pace:
    """Waits scaled by `--time-scale` (1 for a real run; a smoke run shrinks them)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds * self.scale)


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


async def android_type(cdp, text: str, rng: random.Random) -> None:
    """Type as Gboard does: "Unidentified" keys (229), each word composed, then committed."""
    for word in re.findall(r"\S+\s*", text):
        stem = word.rstrip()
        for end in range(1, len(stem) + 1):
            key = {"key": "Unidentified", "windowsKeyCode": 229}
            await cdp.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **key})
            await cdp.send(
                "Input.imeSetComposition",
                {"text": stem[:end], "selectionStart": end, "selectionEnd": end},
            )
            await cdp.send("Input.dispatchKeyEvent", {"type": "keyUp", **key})
            await asyncio.sleep(rng.uniform(0.08, 0.25))
        await cdp.send("Input.insertText", {"text": word})


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


async def copied_canary(page, clipboard: asyncio.Lock, *, select_all: bool = False) -> str:
    """Copy the text (a drag selection, or Ctrl+A) and return the canary an LLM would echo."""
    async with clipboard:
        if select_all:
            await page.click("#progress-label")
            await page.keyboard.press("ControlOrMeta+A")
        else:
            await page.locator("#anon-text").select_text()
        await page.keyboard.press("ControlOrMeta+C")
        copied = await page.evaluate("navigator.clipboard.readText()")
    word = re.search(r"the word “(\w+)”", copied)
    return word.group(1) if word else ""


async def leave_for(context, page, seconds: float, pace: Pace) -> None:
    """Another tab in front for `seconds` (Playwright keeps pages focused unless told not)."""
    cdp = await context.new_cdp_session(page)
    await cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
    other = await context.new_page()
    await other.bring_to_front()
    await pace.sleep(seconds)
    await page.bring_to_front()
    await other.close()


# The patched_* kinds' script, run before the page's own: what an extension or a
# userscript can do to the page's listeners without touching its code.
PATCH_LISTENERS_JS = """(() => {
  const dropped = new Set(['paste', 'copy', 'visibilitychange', 'blur', 'focus', 'pagehide']);
  const original = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    if (dropped.has(type)) return undefined;
    if ((type === 'input' || type === 'beforeinput') && typeof listener === 'function') {
      const shown = listener;
      listener = function (event) {
        const view = new Proxy(event, {get(target, prop) {
          if (prop === 'inputType' && /^insertFrom/.test(target.inputType)) return 'insertText';
          const value = target[prop];
          return typeof value === 'function' ? value.bind(target) : value;
        }});
        return shown.call(this, view);
      };
    }
    return original.call(this, type, listener, options);
  };
})();"""


# What forged telemetry the forging bots post. The page's own script is bypassed: the form is
# sent with form.submit(), which fires no submit event, and its beacon is silenced.
FORGE_JS = """([kind, answer]) => {
  const form = document.getElementById('judge-form');
  const fields = {guessed_name: 0, revealing_text: 0, other_knowledge: answer.length};
  const counts = {};
  for (const [name, n] of Object.entries(fields)) {
    counts[name] = {typed: n, pasted: 0, untrusted: 0};
  }
  const page = Math.round(performance.now());
  let out;
  if (kind === 'forged_minimal') out = {v: 2, page_ms: 41000};
  else if (kind === 'forged_keystrokes') out = {v: 2, keystrokes: answer.length + 4};
  else {
    const claimed = kind === 'forged_full_consistent' ? page : page + 40000;
    out = {v: 2, view: form.dataset.view, page_ms: claimed,
           first_input_ms: Math.min(3000, page), typing_ms: Math.min(9000, page),
           keystrokes: answer.length + 4, paste_events: 0, pasted_chars: 0,
           copy_events: 0, copied_chars: 0, focus_losses: 0, away_ms: 0, fields: counts};
  }
  form.elements.self_identified[1].checked = true;
  form.elements.other_knowledge.value = answer;
  form.elements.telemetry.value = JSON.stringify(out);
  navigator.sendBeacon = () => true;  // the page's own report of the view never leaves
  HTMLFormElement.prototype.submit.call(form);
}"""


async def run_session(
    context, kind: str, base: str, slug: str, pid: str, seed: int, clipboard: asyncio.Lock,
    pace: Pace,
) -> None:  # fmt: skip
    """Drive one participant of `kind` through one text.

    `clipboard`: headless Chromium has one clipboard for all its contexts, as a computer has
    one for all its windows; a session holds the lock from writing or copying to pasting or
    reading, so parallel sessions never read each other's clipboard.
    """
    rng = random.Random(seed)
    page = await context.new_page()
    if kind.startswith("patched_"):
        await page.add_init_script(PATCH_LISTENERS_JS)
    await reach_text(page, base, slug, pid)
    submit = True
    if kind in HUMAN_TYPES:
        # Reads at 200-250 words a minute, thinks, answers 20-60 s after the page came.
        started = time.monotonic()
        words = len((await page.locator("#anon-text").inner_text()).split())
        await pace.sleep(words / rng.uniform(200, 250) * 60)
        if kind == "human_desktop" and rng.random() < 0.5:
            await leave_for(context, page, rng.uniform(1, 2), pace)  # a glance elsewhere
        if kind == "human_two_tabs":
            # Issue 48: their own page again in a second tab for 2-4 s, then back.
            cdp = await context.new_cdp_session(page)
            await cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
            second = await context.new_page()
            await second.goto(page.url)
            await second.wait_for_selector("#anon-text")
            await second.bring_to_front()
            await pace.sleep(rng.uniform(2, 4))
            await page.bring_to_front()
            await second.close()
        think = rng.uniform(20, 60) * pace.scale - (time.monotonic() - started)
        await asyncio.sleep(max(0.0, think))
        identified = rng.random() < 0.5
        tap = page.tap if kind in PHONE_TYPES else page.click
        await tap(f"input[name=self_identified][value={'yes' if identified else 'no'}]")
        texts = (
            [("#guessed_name", f"{rng.choice(FIRST)} {rng.choice(LAST)}"),
             ("#revealing_text", "the lighthouse and the maps")]
            if identified
            else [("#other_knowledge", rng.choice(["no", "No idea.", *HUMAN_ANSWERS]))]
        )  # fmt: skip
        for selector, text in texts:
            await tap(selector)
            if kind == "human_android":
                await android_type(await context.new_cdp_session(page), text, rng)
            else:
                await human_type(page, text, rng)
    elif kind == "paste":
        await pace.sleep(rng.uniform(3, 6))
        answer = "A lighthouse keeper from a northern harbour town, fond of maps."
        await page.check("input[name=self_identified][value=no]")
        await page.click("#other_knowledge")
        async with clipboard:
            await page.evaluate("text => navigator.clipboard.writeText(text)", answer)
            await page.keyboard.press("ControlOrMeta+V")
        await pace.sleep(rng.uniform(1, 3))
    elif kind == "tab_away":
        await pace.sleep(rng.uniform(2, 4))
        await leave_for(context, page, rng.uniform(10, 60), pace)
        await page.check("input[name=self_identified][value=yes]")
        await page.click("#guessed_name")
        await human_type(page, f"{rng.choice(FIRST)} {rng.choice(LAST)}", rng, typo_rate=0)
        await page.click("#revealing_text")
        await human_type(page, "the lighthouse", rng, typo_rate=0)
    elif kind == "leave_reload":
        # Leaves, comes back, reloads (the new page counts from zero), answers.
        await pace.sleep(rng.uniform(2, 4))
        await leave_for(context, page, rng.uniform(15, 40), pace)
        await page.reload()
        await page.wait_for_selector("#anon-text")
        await pace.sleep(rng.uniform(3, 6))
        await answer_no(page, rng.choice(HUMAN_ANSWERS), rng)
    elif kind == "fast":
        await answer_no(page, "a sailor", rng, fast=True)
    elif kind in ("canary", "select_all_copy", *(k for k in BOT_TYPES if k.startswith("canary_"))):
        await pace.sleep(rng.uniform(1, 2))
        word = await copied_canary(page, clipboard, select_all=kind == "select_all_copy")
        # What an obliging LLM answers, then disguised by hand to slip past a word match.
        disguised = {
            "canary_plural": f"{word}s",
            "canary_hyphen": f"{word[:4]}-{word[4:]}",
            "canary_underscore": "_".join(word),
            "canary_cyrillic": word.translate(LATIN_TO_CYRILLIC),
        }.get(kind, word)
        await answer_no(page, f"Probably a lighthouse keeper. {disguised}".strip(), rng)
    elif kind == "script_inserted":
        await pace.sleep(rng.uniform(3, 6))
        await page.check("input[name=self_identified][value=yes]")
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        await page.evaluate("n => { document.getElementById('guessed_name').value = n; }", name)
        await page.click("#revealing_text")
        await human_type(page, "The lighthouse and the old maps give it away.", rng)
    elif kind in ("fill_insert", "exec_insert"):
        await pace.sleep(rng.uniform(5, 10))
        await page.check("input[name=self_identified][value=no]")
        answer = rng.choice(HUMAN_ANSWERS)
        if kind == "fill_insert":
            await page.fill("#other_knowledge", answer)
        else:
            await page.focus("#other_knowledge")
            await page.evaluate("t => document.execCommand('insertText', false, t)", answer)
    elif kind == "patched_paste":
        await pace.sleep(rng.uniform(5, 10))
        await page.check("input[name=self_identified][value=no]")
        await page.click("#other_knowledge")
        async with clipboard:
            await page.evaluate("t => navigator.clipboard.writeText(t)", rng.choice(HUMAN_ANSWERS))
            await page.keyboard.press("ControlOrMeta+V")
        await pace.sleep(rng.uniform(1, 3))
    elif kind == "patched_away":
        await pace.sleep(rng.uniform(2, 4))
        await leave_for(context, page, rng.uniform(15, 25), pace)
        await answer_no(page, rng.choice(HUMAN_ANSWERS), rng)
    elif kind == "no_js":
        await pace.sleep(rng.uniform(5, 10))
        await page.check("input[name=self_identified][value=no]")
        await page.fill("#other_knowledge", rng.choice(HUMAN_ANSWERS))
    elif kind.startswith("forged_"):
        await pace.sleep(rng.uniform(4, 8))
        async with page.expect_navigation():
            await page.evaluate(FORGE_JS, [kind, rng.choice(HUMAN_ANSWERS)])
        submit = False
    if submit:
        async with page.expect_navigation():
            await page.click("#judge-form button[type=submit]")
    await page.wait_for_selector("#completion-code")
    await page.close()


def context_options(kind: str) -> dict:
    """A phone for the phone kinds, no JavaScript for no_js, a desktop for the rest."""
    if kind in PHONE_TYPES:
        return {
            "viewport": {"width": 390, "height": 844},
            "has_touch": True,
            "is_mobile": True,
            "user_agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 "
            "(KHTML, like Gecko) Chrome/150.0 Mobile Safari/537.36",
        }
    if kind == "no_js":
        return {"java_script_enabled": False}
    return {}


async def run_all(
    base: str, slug: str, plan: list[tuple[str, str]], parallel: int, pace: Pace
) -> list:
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
                    permissions=["clipboard-read", "clipboard-write"],
                    base_url=base,
                    **context_options(kind),
                )
                context.set_default_timeout(60_000)
                try:
                    await run_session(context, kind, base, slug, pid, index, clipboard, pace)
                except Exception as error:  # recorded in the results, never hidden
                    errors.append(f"{kind} {pid}: {error!r}"[:300])
                finally:
                    await context.close()

        await asyncio.gather(*(one(i, kind, pid) for i, (kind, pid) in enumerate(plan)))
        await browser.close()
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON")
    parser.add_argument("--sessions", type=int, default=50, help="sessions of each type")
    parser.add_argument("--parallel", type=int, default=8, help="browser contexts at once")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--types",
        default="",
        help="comma-separated session types to run (default: all of the chosen transport)",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="issue 48's kinds over plain HTTP (benchmarks/intruder_bots_http.py) instead of "
        "the browser kinds",
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        help="multiply every wait (reading, thinking, absences) by this: a smoke run only; "
        "the results are then marked as not a measurement",
    )
    args = parser.parse_args()
    if args.http:
        return main_http(args)
    chosen = [kind for kind in (args.types or ",".join(TYPES)).split(",") if kind]
    unknown = set(chosen) - set(TYPES)
    if unknown:
        raise SystemExit(f"unknown session types: {', '.join(sorted(unknown))}")
    if args.sessions < 1 or not chosen:
        raise SystemExit("nothing to run: give --sessions >= 1 and at least one type")
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"chromium not found at {CHROMIUM}")

    started = time.time()
    with tempfile.TemporaryDirectory(prefix="intruder_bots.") as tmp:
        setup_django(Path(tmp))
        plan = [(kind, f"{kind.upper()}{i:04d}") for kind in chosen for i in range(args.sessions)]
        random.Random(args.seed).shuffle(plan)  # interleaved: no type runs alone
        slug = make_study(len(plan) + 5, args.seed)
        server, base = start_server(server_env())
        try:
            errors = asyncio.run(run_all(base, slug, plan, args.parallel, Pace(args.time_scale)))
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        results = collect(plan, full=args.sessions >= TARGETS["min_sessions"])
    results |= {
        "sessions_per_type": args.sessions,
        "parallel_contexts": args.parallel,
        "time_scale": args.time_scale,
        "measurement": args.time_scale == 1.0,
        "errors": errors,
        "wall_seconds": round(time.time() - started, 1),
        "browser": CHROMIUM,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, shared with other sessions",
        "command": " ".join(sys.argv),
    }
    from did_work import require_work

    require_work("intruder_bots", answers=results["telemetry_present"]["answers"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: results[k] for k in ("bots", "human", "limits", "pass")}))
    return 0


def main_http(args: argparse.Namespace) -> int:
    """Issue 48's kinds over plain HTTP: 3 texts of ~100 words a session, real waits."""
    import intruder_bots_http as http

    chosen = [kind for kind in args.types.split(",") if kind] or list(http.KINDS)
    unknown = set(chosen) - set(http.KINDS)
    if unknown:
        raise SystemExit(f"unknown session types: {', '.join(sorted(unknown))}")
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="intruder_bots_http.") as tmp:
        setup_django(Path(tmp))
        from django.contrib.auth import get_user_model

        from intruder.models import Study

        plan = [(kind, f"{kind.upper()}{i:04d}") for kind in chosen for i in range(args.sessions)]
        random.Random(args.seed).shuffle(plan)
        owner = get_user_model().objects.create_user("bench", password=secrets.token_urlsafe(12))
        study = Study.objects.create(
            slug="bots-http", title="Bot benchmark (HTTP)", kind=Study.Kind.INTRUDER,
            owner=owner, is_open=True, items_per_participant=http.ITEMS, judgments_per_text=1,
            catch_trials_per_participant=http.CATCH_PER_SESSION,
            groups=["fictitious"], consent_text="Made-up benchmark study.",
            instructions_text="Name the person if you can.",
        )  # fmt: skip
        http.make_texts(study, len(plan) * (http.ITEMS - http.CATCH_PER_SESSION) + 40, args.seed)
        server, base = start_server(server_env())
        try:
            errors = http.run_http(base, study.slug, plan, args.parallel)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        results = http.collect_http(plan)
    full = args.sessions >= TARGETS["min_sessions"]
    results |= {
        "targets": TARGETS,
        "pass": full
        and all(b["flagged_pct"] >= TARGETS["target_pass"] for b in results["bots"].values())
        and all(h["flagged_pct"] <= TARGETS["human_max"] for h in results["human"].values()),
        "flagged_means": "a session with any judgment excluded under the default rules",
        "overclaim_assumed": http.OVERCLAIM,
        # Were honest people's overclaims independent, a share p of catch answers flags
        # p^2 of them (two catch trials, the rule's two namings): the assumption, in figures.
        "catch_flag_share_expected_if_overclaims_independent": {
            str(p): round(p**http.CATCH_PER_SESSION, 4) for p in (0.05, 0.1, 0.2, 0.3)
        },
        "items_per_session": http.ITEMS,
        "catch_trials_per_session": http.CATCH_PER_SESSION,
        "sessions_per_type": args.sessions,
        "parallel_sessions": args.parallel,
        "errors": errors,
        "wall_seconds": round(time.time() - started, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, shared with other sessions",
        "command": " ".join(sys.argv),
    }
    from did_work import require_work

    require_work("intruder_bots_http", answers=results["answers"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: results[k] for k in ("bots", "human", "pass")}))
    return 0


def collect(plan: list[tuple[str, str]], *, full: bool) -> dict:
    """Count flagged sessions per type from the stored judgments."""
    from intruder.evidence.selectors import DEFAULT_RULES, answer_flag_status
    from intruder.models import Judgment

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
        per_type[kind]["copies_recorded"] += bool((judgment.telemetry or {}).get("copy_events"))
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
            "wilson_95_pct": wilson(flagged, sessions),
            "flag_codes": dict(codes[kind]),
            "copies_recorded": per_type[kind]["copies_recorded"],
            # The judgment's time (server's clock): a "fast" session slowed past 3 s by a
            # busy machine is no longer fast, and this says how many were.
            "answered_under_3s": per_type[kind]["under_3s"],
            "median_time_ms": int(statistics.median(times[kind])) if times[kind] else None,
        }

    ran = {kind for kind, _ in plan}
    bots = {kind: row(kind) for kind in BOT_TYPES if kind in ran}
    limits = {kind: row(kind) for kind in LIMIT_TYPES if kind in ran}
    human = {kind: row(kind) for kind in HUMAN_TYPES if kind in ran}
    passed = full and (
        all(b["flagged_pct"] is not None and b["flagged_pct"] >= TARGETS["target_pass"]
            for b in bots.values())
        and all(h["flagged_pct"] is not None and h["flagged_pct"] <= TARGETS["human_max"]
                for h in human.values())
    )  # fmt: skip
    return {
        "bots": bots,
        "human": human,
        "limits": limits,
        "telemetry_present": {
            "answers": answers,
            "with_telemetry": telemetry,
            "pct": round(100.0 * telemetry / answers, 1) if answers else None,
        },
        "targets": TARGETS,
        # Only a full run (>= min_sessions of each type) can pass.
        "pass": passed,
    }


if __name__ == "__main__":
    sys.exit(main())

"""Issue 48's kinds over plain HTTP: bots whose telemetry fits the server's clock, and people.

    nice -n 10 python benchmarks/intruder_bots.py --http \
        --out benchmarks/results/intruder_bots_http.json [--sessions 50] [--parallel 150]

Run through `intruder_bots.py --http` (same throwaway SQLite database and gunicorn on
loopback). Each session enrols from the Prolific link, consents, and judges 4 texts of about
100 words (2 of them catch trials, made-up persons nobody can know: the study's default,
with the default rule that flags a participant who names someone for 2) with real
waits; the server's clock is the real one. Every post is what a client sends over HTTP: the
page's forms and tokens are read from the HTML, the telemetry is the JSON the page's script
would send.

Bots (what the issue's scripted clients did, every figure consistent with the server):
`bot_quick_reader` answers 3.5-5.8 s after serving claiming 57 ms a typed character;
`bot_no_idea` "no idea" in 4-8 s on every text; `bot_random_famous` "yes" and a random
famous name in 8-16 s; `bot_typing_burst` waits, then 40 characters key by key in 0.2-0.5 s;
`bot_leave_reload` 15-40 s away, back, reload, answer; `bot_two_tabs_away` a second tab of
the page, then both hidden 15-30 s; `bot_silent_first` reads the page without JavaScript,
answers from a second browser 1-5 s later; `bot_inserted` the report the page's script makes
of a whole answer inserted by one input event (fill(), execCommand).

People, with the telemetry the page's script sends for them (simulated, not a browser:
the real-browser kinds are in `intruder_bots.py`): `human_desktop` (200-250 words a minute,
typing 120-250 ms a key, typos), `human_two_tabs` (the same, opening their own page in a
second tab for 2-4 s), `human_reload` (reloads mid-answer), `human_phone` (swipe: one
composed word per input event), `human_dictation` (a few composed phrases), `human_slow`
(100-150 words a minute), `human_fast` (skims at 350-450, types 70-110 ms a key),
`human_no` (knows nobody: "no" to every text, after reading). People answer "yes" with a
name on a real text half the time and, on a catch trial, with probability `OVERCLAIM`
(people do claim to know made-up names; the rate is an assumption, written to the JSON).
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from html import unescape

import requests

BOT_KINDS = (
    "bot_quick_reader",
    "bot_no_idea",
    "bot_random_famous",
    "bot_typing_burst",
    "bot_leave_reload",
    "bot_two_tabs_away",
    "bot_silent_first",
    "bot_inserted",
)
HUMAN_KINDS = (
    "human_desktop",
    "human_two_tabs",
    "human_reload",
    "human_phone",
    "human_dictation",
    "human_slow",
    "human_fast",
    "human_no",
)
KINDS = (*BOT_KINDS, *HUMAN_KINDS)
ITEMS = 4
CATCH_PER_SESSION = 2
CATCH_TEXTS = 8
OVERCLAIM = 0.05
FAMOUS = ["Taylor Swift", "Barack Obama", "Lionel Messi", "Tom Hanks", "Adele", "Elon Musk"]
FIELDS = ("guessed_name", "revealing_text", "other_knowledge")
SENTENCES = [
    "PERSON_1 keeps the old lighthouse on the northern cape and writes letters every week.",
    "Neighbours know PERSON_1 for a quiet voice, a red bicycle and a love of old sea maps.",
    "Before the lighthouse PERSON_1 taught geography at a small school in LOCATION_1.",
    "On Sundays PERSON_1 sings in the harbour choir and repairs fishing nets for friends.",
    "PERSON_1 once sailed alone around the islands and still tells the story at the pub.",
    "Visitors often find PERSON_1 painting the rocks and the gulls from the gallery window.",
    "PERSON_1 has two grown children who live abroad and call every other evening.",
]
CATCH_SENTENCES = [
    "PERSON_1 restores clock towers in small coastal towns and keeps bees on the roof.",
    "PERSON_1 once walked from one end of the country to the other with a borrowed dog.",
    "Friends say PERSON_1 can name every moth in the valley and bakes bread at dawn.",
    "PERSON_1 collects old radios, mends them in a shed and gives them to the village school.",
    "In winter PERSON_1 carves wooden birds and sells them at the market beside the church.",
    "PERSON_1 grew up on a farm, trained as a nurse and now runs the ferry timetable office.",
    "PERSON_1 writes crossword puzzles for the local paper under a name nobody has guessed.",
]


def make_texts(study, n_texts: int, seed: int) -> None:
    """Add `n_texts` texts of ~100 words to `study` and `CATCH_TEXTS` catch trials."""
    from intruder.evidence.catch_trials import catch_trial_add
    from intruder.models import AnonymizedText, Description, TargetPerson

    rng = random.Random(seed)
    for _ in range(CATCH_TEXTS):
        catch_trial_add(study=study, text=" ".join(rng.sample(CATCH_SENTENCES, 7)))
    for i in range(n_texts):
        target = TargetPerson.objects.create(
            study=study, key=f"person_{i}", name=f"Mira Tollund{i}", group="fictitious"
        )
        text = " ".join(rng.sample(SENTENCES, 7))
        description = Description.objects.create(
            study=study, target=target, text=text.replace("PERSON_1", target.name)
        )
        AnonymizedText.objects.create(
            description=description, text=text, status=AnonymizedText.Status.RELEASED
        )


def field(page: str, pattern: str) -> str:
    found = re.search(pattern, page, re.S)
    return unescape(found.group(1)) if found else ""


class Client:
    """One participant's HTTP client: reads forms from the HTML, posts like a browser."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = requests.Session()
        self.page = ""
        self.url = ""

    def get(self, url: str) -> str:
        response = self.http.get(url, timeout=120)
        self.page, self.url = response.text, response.url
        return self.page

    def submit(self, data: dict, *, page: str | None = None, url: str | None = None) -> str:
        page, url = page or self.page, url or self.url
        action = field(page, r'<form method="post" action="([^"]*)"') or url
        token = field(page, r'name="csrfmiddlewaretoken" value="([^"]+)"')
        response = self.http.post(
            requests.compat.urljoin(url, action),
            data={"csrfmiddlewaretoken": token, **data},
            headers={"Referer": url},
            timeout=120,
        )
        self.page, self.url = response.text, response.url
        return self.page

    def beacon(self, page: str, url: str, telemetry: dict) -> None:
        target = field(page, r'data-beacon="([^"]+)"')
        token = field(page, r'name="csrfmiddlewaretoken" value="([^"]+)"')
        self.http.post(
            requests.compat.urljoin(url, target),
            data={"csrfmiddlewaretoken": token, "telemetry": json.dumps(telemetry)},
            headers={"Referer": url},
            timeout=120,
        )


def report(
    view: str,
    *,
    page_ms: float,
    first: float | None,
    typing_ms: float = 0,
    events: int,
    counts: dict[str, dict[str, int]],
    absences=(),
) -> dict:
    """The JSON the page's script sends (intruder/static/intruder/telemetry.js)."""
    page_ms = int(page_ms)
    spans = [[int(min(a, page_ms)), int(min(b, page_ms))] for a, b in absences]
    fields = {
        name: {"typed": 0, "pasted": 0, "untrusted": 0, "restored": 0, "largest": 0}
        for name in FIELDS
    }
    for name, values in counts.items():
        fields[name].update(values)
    return {
        "v": 2,
        "view": view,
        "page_ms": page_ms,
        "first_input_ms": None if first is None else int(min(first, page_ms)),
        "typing_ms": int(min(typing_ms, page_ms)),
        "keystrokes": events,
        "fields": fields,
        "paste_events": 0,
        "pasted_chars": 0,
        "copy_events": 0,
        "copied_chars": 0,
        "absences": spans,
        "focus_losses": len(spans),
        "away_ms": sum(b - a for a, b in spans),
    }


class Text:
    """One served text page: its view, assignment and words; `ms()` its page clock."""

    def __init__(self, client: Client) -> None:
        self.page, self.url = client.page, client.url
        self.view = field(self.page, r'data-view="([^"]+)"')
        self.assignment = field(self.page, r'name="assignment_id" value="(\d+)"')
        body = field(self.page, r'<div class="anon-text" id="anon-text"[^>]*>(.*?)</div>')
        body = re.sub(r"<noscript>.*?</noscript>", "", body, flags=re.S)
        self.words = len(re.sub(r"<[^>]+>", "", body).split())
        self.started = time.monotonic()

    def ms(self) -> float:
        return (time.monotonic() - self.started) * 1000


def answer_of(kind: str, rng: random.Random) -> tuple[bool, dict[str, str]]:
    if kind == "human_no" or rng.random() >= 0.5:
        return False, {
            "other_knowledge": rng.choice(
                [
                    "no",
                    "No idea.",
                    "Someone who lives by the sea, maybe a teacher.",
                    "I don't know, a painter from a harbour town?",
                ]
            )
        }
    return True, {
        "guessed_name": f"{rng.choice(['Mira', 'Lars', 'Ines'])} Tollund",
        "revealing_text": "the lighthouse and the maps",
    }


def typing(
    answer: dict[str, str],
    *,
    per_char: tuple[float, float],
    per_event: float,
    rng: random.Random,
    composed: bool = False,
) -> tuple[float, int, dict]:
    """Return (seconds, input events, per-field counts) of typing `answer`."""
    seconds, events, counts = 0.0, 0, {}
    for name, text in answer.items():
        chars = len(text)
        seconds += chars * rng.uniform(*per_char) / 1000
        n = max(1, round(chars / per_event))
        if per_event == 1:
            n += 2 * sum(rng.random() < 0.05 for _ in range(chars))  # typo and backspace
        events += n
        largest = 0 if composed else min(chars, max(1, round(per_event)) if per_event > 1 else 1)
        counts[name] = {"typed": chars, "largest": largest}
    return seconds, events, counts


def post_answer(client: Client, text: Text, yes: bool, answer: dict, telemetry: dict) -> None:
    data = {
        "assignment_id": text.assignment,
        "self_identified": "yes" if yes else "no",
        **answer,
        "telemetry": json.dumps(telemetry),
    }
    client.submit(data, page=text.page, url=text.url)


def human_text(
    client: Client, text: Text, kind: str, rng: random.Random, first: bool, catch: bool
) -> None:
    wpm = {"human_slow": (100, 150), "human_fast": (350, 450)}.get(kind, (200, 250))
    read = text.words / rng.uniform(*wpm) * 60
    yes, answer = answer_of(kind, rng)
    if catch and yes and rng.random() >= OVERCLAIM:
        yes, answer = False, {"other_knowledge": "No idea who this is."}
    elif catch and not yes and kind != "human_no" and rng.random() < OVERCLAIM:
        yes, answer = True, {"guessed_name": "Anna Berg", "revealing_text": "the bees"}
    style = {
        "human_phone": {"per_char": (200, 350), "per_event": 6.0, "composed": True},
        "human_dictation": {"per_char": (60, 90), "per_event": 12.0, "composed": True},
        "human_fast": {"per_char": (70, 110), "per_event": 1},
    }.get(kind, {"per_char": (120, 250), "per_event": 1})
    seconds, events, counts = typing(answer, rng=rng, **style)
    think = rng.uniform(1, 4) if kind == "human_fast" else rng.uniform(3, 15)
    absences: list[tuple[float, float]] = []
    view = text.view
    if kind == "human_two_tabs" and first:
        time.sleep(rng.uniform(0.3, 0.8) * read)
        opened = text.ms()
        client.beacon(
            text.page,
            text.url,
            report(
                view, page_ms=opened, first=None, events=0, counts={}, absences=[(opened, opened)]
            ),
        )
        second = Client(client.base)
        second.http.cookies = client.http.cookies
        second.get(text.url)
        other = Text(second)
        time.sleep(rng.uniform(2, 4))
        client.beacon(
            other.page,
            other.url,
            report(other.view, page_ms=other.ms(), first=None, events=0, counts={}),
        )
        absences.append((opened, text.ms() + 100))
        time.sleep(max(0.0, read - text.ms() / 1000))
    else:
        time.sleep(read)
    time.sleep(think)
    if kind == "human_reload" and first:
        # Half the answer typed, then a reload: the first view's beacon, a new view.
        time.sleep(seconds / 2)
        now = text.ms()
        half = {
            name: {"typed": c["typed"] // 2, "largest": c["largest"]} for name, c in counts.items()
        }
        client.beacon(
            text.page,
            text.url,
            report(
                view,
                page_ms=now,
                first=now - seconds * 500,
                typing_ms=seconds * 500,
                events=events // 2,
                counts=half,
                absences=[(now, now)],
            ),
        )
        client.get(text.url)
        text = Text(client)
        time.sleep(seconds / 2)
        rest = {
            name: {
                "typed": c["typed"] - c["typed"] // 2,
                "largest": c["largest"],
                "restored": c["typed"] // 2,
            }
            for name, c in counts.items()
        }
        telemetry = report(
            text.view,
            page_ms=text.ms(),
            first=text.ms() - seconds * 500,
            typing_ms=seconds * 500,
            events=events - events // 2,
            counts=rest,
        )
    else:
        time.sleep(seconds)
        telemetry = report(
            view,
            page_ms=text.ms(),
            first=text.ms() - seconds * 1000,
            typing_ms=seconds * 900,
            events=events,
            counts=counts,
            absences=absences,
        )
    post_answer(client, text, yes, answer, telemetry)


def bot_text(client: Client, text: Text, kind: str, rng: random.Random) -> None:
    yes, answer = False, {"other_knowledge": "A lighthouse keeper who loves old maps."}
    absences: list[tuple[float, float]] = []
    per_char, events_per_char, largest = 0.057, 1, 1
    if kind == "bot_quick_reader":
        wait = rng.uniform(3.5, 5.8)
    elif kind == "bot_no_idea":
        wait, answer = rng.uniform(4, 8), {"other_knowledge": rng.choice(["no idea", "No idea"])}
    elif kind == "bot_random_famous":
        wait = rng.uniform(8, 16)
        yes, answer = True, {"guessed_name": rng.choice(FAMOUS), "revealing_text": "the text"}
    elif kind == "bot_typing_burst":
        wait, per_char = rng.uniform(25, 35), rng.uniform(0.2, 0.5) / 40
    elif kind == "bot_inserted":
        wait, per_char, largest = rng.uniform(25, 35), 0.0, None
    elif kind == "bot_leave_reload":
        time.sleep(rng.uniform(2, 4))
        left = text.ms()
        time.sleep(rng.uniform(15, 40))
        client.beacon(
            text.page,
            text.url,
            report(
                text.view,
                page_ms=text.ms(),
                first=None,
                events=0,
                counts={},
                absences=[(left, text.ms())],
            ),
        )
        client.get(text.url)
        text, wait = Text(client), rng.uniform(5, 10)
    elif kind == "bot_two_tabs_away":
        second = Client(client.base)
        second.http.cookies = client.http.cookies
        second.get(text.url)
        other = Text(second)
        time.sleep(rng.uniform(2, 4))
        left, other_left = text.ms(), other.ms()
        time.sleep(rng.uniform(15, 30))
        client.beacon(
            other.page,
            other.url,
            report(
                other.view,
                page_ms=other.ms(),
                first=None,
                events=0,
                counts={},
                absences=[(other_left, other.ms())],
            ),
        )
        absences.append((left, text.ms()))
        wait = text.ms() / 1000 + rng.uniform(5, 10)
    elif kind == "bot_silent_first":
        time.sleep(rng.uniform(1, 5))  # read without JavaScript; a second browser now
        client.get(text.url)
        text, wait = Text(client), rng.uniform(30, 40)
    chars = sum(len(v) for v in answer.values())
    typed_s = chars * per_char
    time.sleep(max(0.0, wait - text.ms() / 1000))
    events = 1 if largest is None else chars * events_per_char
    counts = {
        name: {"typed": len(v), "largest": len(v) if largest is None else largest}
        for name, v in answer.items()
    }
    telemetry = report(
        text.view,
        page_ms=text.ms(),
        first=text.ms() - typed_s * 1000,
        typing_ms=typed_s * 1000,
        events=events,
        counts=counts,
        absences=absences,
    )
    post_answer(client, text, yes, answer, telemetry)


def run_session(
    base: str,
    slug: str,
    kind: str,
    pid: str,
    seed: int,
    catch_ids: set[str],
    errors: list[str],
    lock: threading.Lock,
) -> None:
    rng = random.Random(seed)
    client = Client(base)
    try:
        client.get(f"{base}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X")
        client.submit({"decision": "agree"})
        client.submit({})
        for index in range(ITEMS):
            if 'id="judge-form"' not in client.page:
                break
            text = Text(client)
            if kind in BOT_KINDS:
                bot_text(client, text, kind, rng)
            else:
                human_text(client, text, kind, rng, index == 0, text.assignment in catch_ids)
    except Exception as error:  # recorded in the results, never hidden
        with lock:
            errors.append(f"{kind} {pid}: {error!r}"[:300])


def run_http(base: str, slug: str, plan: list[tuple[str, str]], parallel: int) -> list[str]:
    """Run every session of `plan` over HTTP, `parallel` at a time; return the errors."""
    from intruder.models import Assignment

    errors: list[str] = []
    lock = threading.Lock()
    catch_ids = _CatchAssignments(Assignment)
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        for index, (kind, pid) in enumerate(plan):
            pool.submit(run_session, base, slug, kind, pid, index, catch_ids, errors, lock)
    return errors


class _CatchAssignments:
    """`assignment id in catch` asks the database (people do not know which text is a catch
    trial; the simulation needs it for `OVERCLAIM` only)."""

    def __init__(self, model) -> None:
        self.model = model

    def __contains__(self, assignment_id: str) -> bool:
        return self.model.objects.filter(
            pk=int(assignment_id), text__description__target__catch=True
        ).exists()


def collect_http(plan: list[tuple[str, str]]) -> dict:
    """Count flagged sessions (any judgment flagged) and judgments per kind."""
    from intruder_bots import wilson

    from intruder.evidence.selectors import DEFAULT_RULES, Flag, answer_flag_status
    from intruder.models import Judgment

    kinds = {pid: kind for kind, pid in plan}
    sessions: dict[str, dict[str, set]] = {
        kind: {"answered": set(), "flagged": set(), "flagged_not_catch": set()} for kind in KINDS
    }
    codes: dict[str, dict[str, int]] = {kind: {} for kind in KINDS}
    judged = {kind: [0, 0, 0] for kind in KINDS}  # judgments, flagged, on a catch trial
    for judgment in Judgment.objects.select_related("participant", "text__description__target"):
        pid = judgment.participant.prolific_pid
        kind = kinds[pid]
        status = answer_flag_status(judgment, DEFAULT_RULES)
        sessions[kind]["answered"].add(pid)
        judged[kind][0] += 1
        judged[kind][2] += judgment.text.description.target.catch
        if status.excluded:
            sessions[kind]["flagged"].add(pid)
            judged[kind][1] += 1
            if set(status.flag_codes) - {Flag.CATCH_IDENTIFIED}:
                sessions[kind]["flagged_not_catch"].add(pid)
        for code in set(status.flag_codes):
            codes[kind][code] = codes[kind].get(code, 0) + 1

    def row(kind: str) -> dict:
        n = sum(1 for k, _ in plan if k == kind)
        flagged = len(sessions[kind]["flagged"])
        return {
            "sessions": n,
            "answered": len(sessions[kind]["answered"]),
            "flagged": flagged,
            "flagged_pct": round(100 * flagged / n, 1) if n else None,
            "wilson_95_pct": wilson(flagged, n),
            # By a flag other than the catch trial's (whose honest rate is the assumption).
            "flagged_not_by_catch_trial": len(sessions[kind]["flagged_not_catch"]),
            "flagged_not_by_catch_trial_wilson_95_pct": wilson(
                len(sessions[kind]["flagged_not_catch"]), n
            ),
            "judgments": judged[kind][0],
            "judgments_flagged": judged[kind][1],
            "judgments_on_catch_trials": judged[kind][2],
            "judgments_per_flag_code": codes[kind],
        }

    ran = {kind for kind, _ in plan}
    return {
        "bots": {kind: row(kind) for kind in BOT_KINDS if kind in ran},
        "human": {kind: row(kind) for kind in HUMAN_KINDS if kind in ran},
        "answers": sum(j[0] for j in judged.values()),
    }

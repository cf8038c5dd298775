"""The simulated participants, acting over real HTTP against the rehearsal's site.

Each player is one Prolific participant: it takes a place on the sandbox Prolific, opens the
entry link, consents, reads and answers, and finishes (or returns, times out, reloads, opens a
second tab...), as `crowd.Kind` says. Its telemetry is what `intruder/static/intruder/
telemetry.js` would send for what it did, on the rehearsal's clock (`clock.py`): an honest
player reads at a person's pace and types key by key, a paste bot pastes, a script bot sends
none. Every answer the site acknowledged is recorded with what it truly was, so the
invariants can check that nothing was lost and that money follows the truth.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from intruder.rehearsal.clock import VirtualClock
from intruder.rehearsal.crowd import Guess, Kind, honest_guess, outsider_names

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
ASSIGNMENT = re.compile(r'name="assignment_id" value="(\d+)"')
VIEW = re.compile(r'data-view="([^"]+)"')
TEXT = re.compile(r'id="anon-text"[^>]*>(.*?)</div>', re.S)
FAMILIARITY_ITEM = re.compile(r'name="known" value="(\d+)"[^>]*> ([^<]+?)</label>')

# Reading speed in words per minute and typing speed in characters per second, per kind.
READING_WPM = {Kind.SLOW_READER: (100, 130)}
DEFAULT_WPM = (200, 250)
TYPING_CPS = {Kind.HONEST_PHONE: (2.0, 3.0)}
DEFAULT_CPS = (4.0, 7.0)


@dataclass
class Answer:
    """One answer the site took: which assignment, what was said, and its truth."""

    assignment_id: int
    guess: Guess
    person: str


@dataclass
class PlayerRecord:
    """What one simulated participant did and what the site answered."""

    pid: str
    kind: Kind
    session: str = ""
    entered: bool = False
    completed: bool = False
    returned: bool = False
    timed_out: bool = False
    refused: str = ""
    answers: list[Answer] = field(default_factory=list)
    second_entry_status: int | None = None
    errors: list[str] = field(default_factory=list)
    cpu_seconds: float = 0.0  # this player's own thread: the crowd's CPU, apart from the site


class Latencies:
    """Per-step request latencies in ms (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_step: dict[str, list[float]] = defaultdict(list)

    def add(self, step: str, ms: float) -> None:
        with self._lock:
            self.by_step[step].append(ms)


@dataclass
class Stage:
    """What the players share: the site, the sandbox Prolific, the clock and the truth."""

    site: str
    slug: str
    prolific_study_id: str
    fake: Any  # intruder.prolific.fake_server.FakeProlific
    clock: VirtualClock
    latencies: Latencies
    # assignment -> (name, group, the study's other persons, whether a catch trial)
    person_of: Callable[[int], tuple[str, str, list[str], bool]]
    right_rate: dict[str, float]
    timeout_s: float  # when the sandbox times out a participant who stopped answering


class Player:
    """One participant's visit; `play` returns its record (errors are recorded, not raised)."""

    def __init__(self, stage: Stage, kind: Kind, index: int, seed: int) -> None:
        self.stage = stage
        self.kind = kind
        self.rng = random.Random(seed * 1_000_003 + index)
        self.record = PlayerRecord(pid=f"{seed:04x}{index:020x}", kind=kind)
        self.address = client_address(index)
        self.http = httpx.Client(
            base_url=stage.site,
            timeout=60,
            follow_redirects=False,
            headers={"X-Forwarded-For": self.address},
        )
        self.home = ""

    # --- plumbing ---------------------------------------------------------------------------

    def _request(self, step: str, method: str, url: str, **kwargs: Any) -> httpx.Response:
        started = time.perf_counter()
        response = self.http.request(method, url, **kwargs)
        self.stage.latencies.add(step, 1000 * (time.perf_counter() - started))
        if response.status_code >= 500:
            self.record.errors.append(f"{step}: HTTP {response.status_code}")
        return response

    def _post(self, step: str, url: str, page: str, data: dict[str, Any]) -> httpx.Response:
        token = CSRF.search(page)
        return self._request(
            step, "POST", url, data={**data, "csrfmiddlewaretoken": token.group(1) if token else ""}
        )

    def wait(self, seconds: float) -> None:
        """Let `seconds` pass on the rehearsal's clock."""
        self.stage.clock.sleep(seconds)

    # --- the visit --------------------------------------------------------------------------

    def play(self) -> PlayerRecord:
        started = time.thread_time()
        try:
            self._play()
        except httpx.HTTPError as error:
            self.record.errors.append(f"transport: {error!r}")
        except Exception as error:  # the rehearsal's own failure: named, never a lost player
            self.record.errors.append(f"rehearsal: {error!r}")
        finally:
            self.http.close()
            self.record.cpu_seconds = time.thread_time() - started
        return self.record

    def _play(self) -> None:
        fake, stage = self.stage.fake, self.stage
        self.record.session = fake.submission_start(stage.prolific_study_id, self.record.pid)
        if self.kind == Kind.CODE_ONLY:
            # Enters the completion code on Prolific without ever opening the study here.
            self.wait(self.rng.uniform(30, 120))
            fake.submission_set_status(self.record.session, "AWAITING REVIEW")
            return
        if not self._enter():
            return
        page = self._get_home()
        self._post("consent", f"{self.home}consent/", page, {"decision": "agree"})
        page = self._get_home()
        self.wait(self.rng.uniform(10, 25))  # reads the instructions
        self._post("instructions", f"{self.home}instructions/", page, {})
        leave_at = self.rng.randrange(3) if self.kind in (Kind.RETURNER, Kind.TIMES_OUT) else -1
        for number in range(1000):
            page = self._get_home()
            assignment = ASSIGNMENT.search(page)
            if assignment is None:
                break
            if number == leave_at:
                self._leave(Kind.RETURNER if self.kind == Kind.RETURNER else Kind.TIMES_OUT)
                return
            if self.kind == Kind.DUPLICATE_PID and number == 0:
                self._enter_again()
            self._judge(page, int(assignment.group(1)))
        self._finish(page)

    def _enter(self) -> bool:
        response = self._request(
            "entry",
            "GET",
            f"/s/{self.stage.slug}/",
            params={
                "PROLIFIC_PID": self.record.pid,
                "STUDY_ID": self.stage.prolific_study_id,
                "SESSION_ID": self.record.session,
            },
        )
        if response.status_code != 302 or "/p/" not in response.headers.get("location", ""):
            self.record.refused = f"HTTP {response.status_code}"
            self.stage.fake.submission_set_status(self.record.session, "RETURNED")
            return False
        self.home = response.headers["location"]
        self.record.entered = True
        return True

    def _enter_again(self) -> None:
        """The same person opens the entry link from a second device (a new Prolific session
        is not made: Prolific gives one submission per participant)."""
        other = httpx.Client(
            base_url=self.stage.site,
            timeout=60,
            follow_redirects=False,
            headers={"X-Forwarded-For": client_address(10**6 + int(self.record.pid, 16) % 10**6)},
        )
        try:
            response = other.get(
                f"/s/{self.stage.slug}/",
                params={
                    "PROLIFIC_PID": self.record.pid,
                    "STUDY_ID": self.stage.prolific_study_id,
                    "SESSION_ID": self.record.session,
                },
            )
            self.record.second_entry_status = response.status_code
        finally:
            other.close()

    def _get_home(self) -> str:
        response = self._request("page", "GET", self.home)
        return response.text

    def _leave(self, how: Kind) -> None:
        """Return the study on Prolific, or stop answering until Prolific times it out."""
        if how == Kind.RETURNER:
            self.wait(self.rng.uniform(5, 40))
            self.stage.fake.submission_set_status(self.record.session, "RETURNED")
            self.record.returned = True
        else:
            self.wait(self.stage.timeout_s)
            self.stage.fake.submission_set_status(self.record.session, "TIMED-OUT")
            self.record.timed_out = True

    # --- one text ---------------------------------------------------------------------------

    def _answer_for(self, assignment_id: int) -> tuple[Guess, str]:
        person, group, others, catch = self.stage.person_of(assignment_id)
        if self.kind == Kind.CARELESS:
            return Guess("dont_know", ""), person
        if self.kind == Kind.RANDOM_FAMOUS:
            return Guess("famous_name", self.rng.choice(outsider_names(person, others))), person
        guess = honest_guess(
            rng=self.rng,
            person=person,
            group=group,
            others=others,
            right_rate=self.stage.right_rate,
            catch=catch,
        )
        return guess, person

    def _judge(self, page: str, assignment_id: int) -> None:
        guess, person = self._answer_for(assignment_id)
        view = VIEW.search(page)
        shown_text = TEXT.search(page)
        words = len(re.sub(r"<[^>]+>", " ", shown_text.group(1) if shown_text else "").split())
        answers = _answers(guess, careless=self.kind == Kind.CARELESS)
        chars = sum(len(value) for value in answers.values())
        if self.kind == Kind.CARELESS:
            reading = self.rng.uniform(4, 8)
        elif self.kind == Kind.RANDOM_FAMOUS:
            reading = self.rng.uniform(10, 16)
        elif self.kind in (Kind.PASTE_BOT, Kind.SCRIPT_BOT):
            reading = self.rng.uniform(1, 3)
        else:
            low, high = READING_WPM.get(self.kind, DEFAULT_WPM)
            reading = 60 * words / self.rng.uniform(low, high)
        low, high = TYPING_CPS.get(self.kind, DEFAULT_CPS)
        typing = (
            0.0
            if self.kind in (Kind.PASTE_BOT, Kind.SCRIPT_BOT)
            else chars / self.rng.uniform(low, high)
        )
        clock = self.stage.clock
        shown = clock.now_ms()  # the view's own clock starts when the page came
        absences: list[list[int]] = []
        if self.kind == Kind.RELOADER:
            self.wait(reading / 2)
            self._beacon(page, view, answers={}, page_ms=clock.now_ms() - shown)
            page = self._get_home()  # a reload: the page again, a new view of it
            view = VIEW.search(page)
            shown = clock.now_ms()
            reading /= 2
        if self.kind == Kind.TWO_TABS:
            self.wait(reading / 2)
            gone = clock.now_ms() - shown
            second = self._get_home()  # the same page in a second tab, for a few seconds
            self.wait(self.rng.uniform(2, 4))
            self._beacon(
                second, VIEW.search(second), answers={}, page_ms=clock.now_ms() - shown - gone
            )
            absences.append([gone, clock.now_ms() - shown])
            reading /= 2
        self.wait(reading + typing)
        page_ms = max(1, clock.now_ms() - shown)
        telemetry = None
        if self.kind != Kind.SCRIPT_BOT:
            telemetry = _telemetry(
                view=view.group(1) if view else "",
                answers=answers,
                page_ms=page_ms,
                typing_ms=int(typing * 1000),
                pasted=self.kind == Kind.PASTE_BOT,
                absences=absences,
            )
        data = {
            "assignment_id": assignment_id,
            "client_ms": page_ms,
            "self_identified": "yes" if guess.name else "no",
            **answers,
        }
        if telemetry is not None:
            data["telemetry"] = json.dumps(telemetry)
        response = self._post("answer", f"{self.home}judge/", page, data)
        if response.status_code == 302:
            self.record.answers.append(Answer(assignment_id, guess, person))
        else:
            self.record.errors.append(f"answer refused: HTTP {response.status_code}")

    def _beacon(self, page: str, view: re.Match | None, *, answers: dict, page_ms: int) -> None:
        """Send what the page sends as it is left (a reload, a tab closed): its counts so far."""
        telemetry = _telemetry(
            view=view.group(1) if view else "",
            answers=answers,
            page_ms=max(1, page_ms),
            typing_ms=0,
            pasted=False,
            absences=[],
        )
        self._post("beacon", f"{self.home}telemetry/", page, {"telemetry": json.dumps(telemetry)})

    # --- the end ----------------------------------------------------------------------------

    def _finish(self, page: str) -> None:
        data: dict[str, Any] = {}
        items = FAMILIARITY_ITEM.findall(page)
        if items:
            named = {a.person for a in self.record.answers if a.guess.names_the_person}
            known = [place for place, name in items if name in named or self.rng.random() < 0.3]
            data = {"known": known} if known else {"none_of_these": "1"}
        form = re.search(r'<form method="post" action="([^"]+)"', page)
        url = form.group(1) if form else f"{self.home}finish/"
        response = self._post("finish", url, page, data)
        if response.status_code == 302 and "prolific" in response.headers.get("location", ""):
            self.record.completed = True
            self.stage.fake.submission_set_status(self.record.session, "AWAITING REVIEW")
        else:
            self.record.errors.append(f"finish: HTTP {response.status_code}")


def client_address(index: int) -> str:
    """Return participant `index`'s own address (private range): one person, one client."""
    return f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"


def _answers(guess: Guess, *, careless: bool) -> dict[str, str]:
    if guess.name:
        return {"guessed_name": guess.name, "revealing_text": "the career and the dates"}
    return {"other_knowledge": "no idea" if careless else "A performer, probably British."}


def _telemetry(
    *,
    view: str,
    answers: dict[str, str],
    page_ms: int,
    typing_ms: int,
    pasted: bool,
    absences: list[list[int]],
) -> dict[str, Any]:
    """Return what telemetry.js posts for this answer (all signals on)."""
    chars = sum(len(v) for v in answers.values())
    fields = {
        name: {
            "typed": 0 if pasted else len(answers.get(name, "")),
            "pasted": len(answers.get(name, "")) if pasted else 0,
            "untrusted": 0,
            "largest": 0 if pasted else min(1, len(answers.get(name, ""))),
        }
        for name in ("guessed_name", "revealing_text", "other_knowledge")
    }
    away = sum(end - start for start, end in absences)
    return {
        "v": 2,
        "view": view,
        "page_ms": page_ms,
        "first_input_ms": max(0, page_ms - typing_ms) if chars else None,
        "typing_ms": typing_ms,
        "keystrokes": 0 if pasted else chars,
        "paste_events": len([a for a in answers.values() if a]) if pasted else 0,
        "pasted_chars": chars if pasted else 0,
        "copy_events": 0,
        "copied_chars": 0,
        "focus_losses": len(absences),
        "away_ms": away,
        "absences": absences,
        "fields": fields,
    }

"""The manual cannot drift: its commands, links, imports and tables are checked against the code.

Every command shown in README.md, docs/ and benchmarks/README.md (fenced shell blocks,
indented command lines, and inline `python ...` spans) is classified. `python -m`, `manage.py`
and benchmark/script commands run with `--help` in one child process, and every `--option`
shown must appear in that help. Scripts and files named must exist. Commands that cannot run
in a test are in ALLOWED, each with its reason. Relative links and their anchors must resolve,
the Python imports in code examples must work, the environment-variable table must match the
variables the code reads, and every current result JSON must be linked from RESULTS.md.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MANUAL = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), REPO / "benchmarks/README.md"]
HISTORY = sorted((REPO / "benchmarks/history").glob("*.md"))
LINKED = [*MANUAL, REPO / "benchmarks/RESULTS.md", *HISTORY]
LIBRARY_MODULES = {"anonymize", "attacks", "guard"}
# Files other branches of this session add; the lead merges them. Links to them may dangle
# until then, and only then.
PENDING: dict[str, str] = {}
# Programs the test cannot run, and why. Their arguments are still checked for repo files.
ALLOWED = {
    "curl": "needs a running server; the API is tested in tests/intruder/api/",
    "gunicorn": "starts a server; gunicorn.conf.py is tested in operations/test_serving.py",
    ".": "changes the calling shell (activates .venv); scripts/setup.sh creates it",
    "source": "changes the calling shell (activates .venv); scripts/setup.sh creates it",
    "ruff": "the linter; scripts/test.sh runs it on every CI run",
    "awk": "text processing of another command's output",
    "pip": "installs packages; the extras named are checked against pyproject.toml",
    "python -c": "an inline one-liner, no project entry point",
    "torchrun": "needs several GPUs or machines; docs/decisions/tria.md says what was checked",
    "accelerate": "needs several GPUs or machines; docs/decisions/tria.md says what was checked",
}
REPO_PREFIXES = ("docs/", "benchmarks/", "scripts/", "tests/", "anonymize/", "attacks/",
                 "guard/", "intruder/", ".ci/", "gunicorn.conf.py")  # fmt: skip
CONFIG_PREFIXES = ("DJANGO_", "INTRUDER_", "GUNICORN_", "DEMO_", "TEST_", "SHARED_", "TAB_",
                   "PROBE_", "DATABASE_", "LLM_")  # fmt: skip
SHELL_LANGS = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.M | re.S)
COMMAND_START = r"(?:python3? |\.venv/bin/python |scripts/\w+\.sh\b|pip install )"
INLINE = re.compile(rf"`({COMMAND_START}[^`\n]*)`")
INDENTED = re.compile(rf"^ {{4}}({COMMAND_START}.*)$", re.M)


@dataclass
class Command:
    source: str  # "docs/x.md:12"
    words: list[str]
    env: list[str] = field(default_factory=list)


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def strip_fences(text: str) -> str:
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def substitutions(command: str) -> tuple[str, list[str]]:
    """Cut `$(...)` out of a command line; return the line and the inner commands."""
    inner, out, i = [], [], 0
    while i < len(command):
        if command.startswith("$(", i):
            depth, j = 1, i + 2
            while j < len(command) and depth:
                depth += {"(": 1, ")": -1}.get(command[j], 0)
                j += 1
            inner.append(command[i + 2 : j - 1])
            out.append("SUBSTITUTED")
            i = j
        else:
            out.append(command[i])
            i += 1
    return "".join(out), inner


def split_shell(line: str) -> list[list[str]]:
    """Split a shell line into simple commands (on |, &&, ;), comments dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands, current = [], []
    for token in lexer:
        if token and set(token) <= set(";&|"):
            if current:
                commands.append(current)
            current = []
        else:
            current.append(token)
    if current:
        commands.append(current)
    return commands


def to_commands(source: str, line: str, *, shell: bool) -> list[Command]:
    line, inner = substitutions(line)
    pieces = []
    for text in [line, *inner]:
        if shell:
            pieces += split_shell(text)
        else:  # an inline span is a synopsis: `a|b` is a choice, not a pipe
            try:
                pieces.append(shlex.split(text.replace("\\|", "|"), comments=True))
            except ValueError:
                pieces.append(text.split())
    commands = []
    for words in pieces:
        env = []
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            env.append(words.pop(0).split("=", 1)[0])
        if words and words[0] == "env":
            words = words[1:]
        if words or env:
            commands.append(Command(source, words, env))
    return commands


@cache
def manual_commands() -> list[Command]:
    commands: list[Command] = []
    for path in MANUAL:
        text = path.read_text(encoding="utf-8")
        for fence in FENCE.finditer(text):
            if fence.group(1) not in SHELL_LANGS:
                continue
            body = fence.group(2).replace("\\\n", " ")
            start = line_of(text, fence.start()) + 1
            for number, line in enumerate(body.splitlines()):
                if line.strip() and not line.lstrip().startswith("#"):
                    source = f"{rel(path)}:{start + number}"
                    # A synopsis ("[--attack tria|bm25]") shows choices, not pipes.
                    commands += to_commands(source, line, shell="[-" not in line)
        outside = strip_fences(text)
        for match in INDENTED.finditer(outside.replace("\\\n", " ")):
            source = f"{rel(path)}:{line_of(outside, match.start())}"
            commands += to_commands(source, match.group(1), shell="[-" not in match.group(1))
        for match in INLINE.finditer(outside):
            source = f"{rel(path)}:{line_of(outside, match.start())}"
            commands += to_commands(source, match.group(1), shell=False)
    return commands


def program(words: list[str]) -> str:
    """Return the key that classifies a command: 'python -m anonymize', 'manage.py', ..."""
    if not words:
        return ""
    head = words[0]
    if head in ("python", "python3", ".venv/bin/python"):
        rest = words[1:]
        if rest[:1] == ["-m"] and len(rest) > 1:
            return f"python -m {rest[1]}"
        if rest[:1] == ["-c"]:
            return "python -c"
        if rest and rest[0] == "manage.py":
            return "manage.py"
        if rest and rest[0].endswith(".py"):
            return "script"
        return "python"
    if head.startswith(".venv/bin/"):
        return head.removeprefix(".venv/bin/")
    if head.startswith(("scripts/", ".ci/")):
        return "repo-executable"
    return head


def options(words: list[str]) -> list[str]:
    found = []
    for word in words:
        word = word.strip("[]")
        for part in word.split("|"):
            if part.startswith("--") and len(part) > 2:
                found.append(part.split("=", 1)[0])
    return found


def after(words: list[str], marker: str) -> list[str]:
    return words[words.index(marker) + 1 :]


def help_jobs(command: Command) -> list[dict]:
    """Return the help-runner jobs of a runnable command (one per subcommand shown)."""
    kind, words = program(command.words), command.words
    if kind.startswith("python -m ") and kind.split()[-1] in LIBRARY_MODULES:
        rest = after(words, "-m")[1:]
        subs = rest[0].split("|") if rest and not rest[0].startswith("-") else [""]
        module = kind.split()[-1]
        return [{"kind": "module", "target": module, "argv": [*filter(None, [sub]), "--help"]}
                for sub in subs]  # fmt: skip
    if kind == "manage.py":
        rest = after(words, "manage.py")
        return [{"kind": "manage", "argv": [rest[0], "--help"]}] if rest else []
    if kind == "script":
        return [{"kind": "script", "target": words[1], "argv": ["--help"]}]
    return []


def python_imports() -> list[tuple[str, str]]:
    """Return (source, import statement) for every top-level import in ```python blocks."""
    found = []
    for path in MANUAL:
        text = path.read_text(encoding="utf-8")
        for fence in FENCE.finditer(text):
            if fence.group(1) != "python":
                continue
            for line in fence.group(2).splitlines():
                if re.match(r"(from \S+ import |import )", line):
                    found.append((f"{rel(path)}:{line_of(text, fence.start())}", line))
    return found


@pytest.fixture(scope="module")
def helps() -> dict[str, dict]:
    """Run every distinct help job and import in one child process."""
    jobs: dict[str, dict] = {}
    for command in manual_commands():
        for job in help_jobs(command):
            jobs[json.dumps(job, sort_keys=True)] = job
    for _, code in python_imports():
        job = {"kind": "import", "code": code}
        jobs[json.dumps(job, sort_keys=True)] = job
    keys = list(jobs)
    done = subprocess.run(
        [sys.executable, str(REPO / "tests/docs/help_runner.py")],
        input=json.dumps([jobs[k] for k in keys]),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(zip(keys, json.loads(done.stdout), strict=True))


def test_the_manual_shows_commands_and_the_readme_shows_the_ci_command() -> None:
    commands = manual_commands()
    readme = [c.words for c in commands if c.source.startswith("README.md")]
    assert ["scripts/demo.sh"] in readme and ["scripts/test.sh"] in readme
    assert "scripts/test.sh" in (REPO / ".ci/run").read_text()
    assert len(commands) > 50


def test_every_command_is_runnable_or_allowed_with_a_reason() -> None:
    problems = []
    for command in manual_commands():
        kind = program(command.words)
        if not command.words:
            continue  # a bare assignment, e.g. TOKEN=$(...): its inner command is checked
        if kind in ALLOWED or help_jobs(command):
            continue
        if kind == "repo-executable":
            path = REPO / command.words[0]
            if not (path.is_file() and path.stat().st_mode & 0o111):
                problems.append(f"{command.source}: {command.words[0]} is not an executable file")
        elif kind in ("pytest", "python -m pytest"):
            continue  # its paths are checked by test_every_repository_path_named_exists
        elif kind == "export":
            continue  # its variables are checked by test_every_variable_set_is_documented
        else:
            problems.append(f"{command.source}: no check for {' '.join(command.words)!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow  # the `helps` fixture runs every command's --help in a child process
def test_every_command_runs_its_help_and_knows_every_option_shown(helps) -> None:
    problems = []
    for command in manual_commands():
        jobs = help_jobs(command)
        if not jobs:
            continue
        results = [helps[json.dumps(job, sort_keys=True)] for job in jobs]
        shown = " ".join(command.words)
        failed = [r for r in results if r["code"] != 0]
        if failed:
            problems.append(f"{command.source}: `{shown}` --help failed:\n{failed[0]['stderr']}")
            continue
        known = {o for r in results for o in re.findall(r"--[\w-]+", r["stdout"])}
        missing = [o for o in options(command.words) if o not in known]
        if missing:
            problems.append(f"{command.source}: `{shown}`: unknown option(s) {missing}")
    assert not problems, "\n".join(problems)


def test_every_repository_path_named_exists() -> None:
    problems = []
    for command in manual_commands():
        for word in command.words[1:]:
            for part in word.strip("[]").split("="):
                placeholder = re.search(r"[<>*{}]|/$", part)
                if (
                    part.startswith(REPO_PREFIXES)
                    and not placeholder
                    and not (REPO / part).exists()
                ):
                    problems.append(f"{command.source}: {part} does not exist")
    assert not problems, "\n".join(problems)


def test_every_repository_path_in_the_text_exists() -> None:
    """Paths in code spans (`intruder/exchange/imports.py`) must name real files or folders."""
    problems = []
    for path in LINKED:
        text = strip_fences(path.read_text(encoding="utf-8"))
        for span in re.finditer(r"`([^`\n]+)`", text):
            for word in span.group(1).split():
                word = word.strip("()[],;:").split("::")[0]
                is_path = word.startswith(REPO_PREFIXES) and re.search(r"\.\w+$|/$", word)
                if is_path and not re.search(r"[<>*{}]", word) and not (REPO / word).exists():
                    problems.append(f"{rel(path)}:{line_of(text, span.start())}: {word} is gone")
    assert not problems, "\n".join(problems)


def test_pip_extras_shown_exist() -> None:
    pyproject = (REPO / "pyproject.toml").read_text()
    for command in manual_commands():
        if program(command.words) != "pip":
            continue
        for extra in re.findall(r"\.\[([\w,-]+)\]", " ".join(command.words)):
            for name in extra.split(","):
                assert re.search(rf"^{name} = \[", pyproject, re.M), f"{command.source}: {name}"


@pytest.mark.slow  # shares the `helps` fixture
def test_code_examples_import(helps) -> None:
    problems = []
    for source, code in python_imports():
        result = helps[json.dumps({"kind": "import", "code": code}, sort_keys=True)]
        if result["code"] != 0:
            problems.append(f"{source}: `{code}` fails:\n{result['stderr']}")
    assert not problems, "\n".join(problems)


# Environment variables --------------------------------------------------------------------

PY_ENV = re.compile(
    r"""(?:os\.environ(?:\.get)?\(\s*|os\.environ\[\s*|os\.getenv\(\s*|_env_\w+\(\s*)"""
    r"""["']([A-Z][A-Z0-9_]+)["']"""
)
SH_ENV = re.compile(r"\$\{([A-Z][A-Z0-9_]+):?-")


# Set by the system, not by whoever runs the platform.
SYSTEM_VARIABLES = {"PATH", "HOME", "USER", "TMPDIR"}


def variables_read_by_the_code() -> set[str]:
    names: set[str] = set()
    for folder in (
        "intruder",
        "anonymize",
        "attacks",
        "guard",
        "llm",
        "model_runtime",
        "research_data",
        "benchmarks",
        "scripts",
        "tests",
    ):
        for path in (REPO / folder).rglob("*.py"):
            names |= set(PY_ENV.findall(path.read_text(encoding="utf-8")))
    for path in [REPO / "gunicorn.conf.py", REPO / "manage.py"]:
        names |= set(PY_ENV.findall(path.read_text(encoding="utf-8")))
    for path in (REPO / "scripts").glob("*.sh"):
        text = path.read_text(encoding="utf-8")
        assigned = set(re.findall(r"^\s*([A-Z][A-Z0-9_]+)=", text, re.M))
        names |= set(SH_ENV.findall(text)) - assigned
    return names - SYSTEM_VARIABLES


def documented_variables() -> set[str]:
    text = (REPO / "docs/configuration.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", text, re.M))


def test_the_environment_table_lists_exactly_the_variables_the_code_reads() -> None:
    read, documented = variables_read_by_the_code(), documented_variables()
    assert "DJANGO_SECRET_KEY" in read and "GUNICORN_WORKERS" in read and "TEST_SKIP_PG" in read
    assert not read - documented, f"read by the code, missing from the table: {read - documented}"
    assert not documented - read, f"in the table, read nowhere: {documented - read}"


def test_every_variable_set_is_documented() -> None:
    documented = documented_variables()
    problems = []
    for command in manual_commands():
        names = list(command.env)
        if program(command.words) == "export":
            names += [w.split("=", 1)[0] for w in command.words[1:]]
        for name in names:
            if name.startswith(CONFIG_PREFIXES) and name not in documented:
                problems.append(f"{command.source}: {name} is not in docs/configuration.md")
    assert not problems, "\n".join(problems)


# Links and results ------------------------------------------------------------------------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """Return GitHub's anchor for a heading."""
    text = unicodedata.normalize("NFC", heading.strip().lower())
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> set[str]:
    text = strip_fences(path.read_text(encoding="utf-8"))
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_every_relative_link_and_anchor_resolves() -> None:
    problems = []
    for path in LINKED:
        text = strip_fences(path.read_text(encoding="utf-8"))
        for match in LINK.finditer(text):
            target = match.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            where = f"{rel(path)}:{line_of(text, match.start())}"
            if not resolved.exists():
                if resolved.is_relative_to(REPO) and rel(resolved) in PENDING:
                    continue
                problems.append(f"{where}: {target} does not exist")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                problems.append(f"{where}: no heading #{anchor} in {rel(resolved)}")
    assert not problems, "\n".join(problems)


def test_every_current_result_is_linked_from_results_md() -> None:
    results = (REPO / "benchmarks/RESULTS.md").read_text(encoding="utf-8")
    unlinked = [
        p.name for p in sorted((REPO / "benchmarks/results").glob("*.json"))
        if f"results/{p.name}" not in results
    ]  # fmt: skip
    assert not unlinked, f"benchmarks/results/ files RESULTS.md does not mention: {unlinked}"


def test_results_md_shows_the_current_numbers_on_one_page() -> None:
    """RESULTS.md is today's numbers (issue 50): a table per area, under 600 lines; the
    story of every run lives in benchmarks/history/ and the decision records."""
    text = (REPO / "benchmarks/RESULTS.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 600
    assert "history/results-diary.md" in text


def test_the_readme_stays_a_front_door() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 10_500
    assert "flock" not in text and not re.search(r"\b[0-9a-f]{7,40}\b", text)

"""The repeated-code record (docs/decisions/duplicates.md) stays current (issue 50).

It once said 92 pairs where the tool listed more, and named a file deleted since. The
`duplicates` tool is not installed where the tests run, so this checks what can be checked
without it: the count it states is the rows it lists, each group's count is its rows, no row
is listed twice, and every file a row names exists. A change that moves or deletes such a
file fails here until the record is regenerated (`scripts/duplicates_production.sh
--no-migrations`).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RECORD = REPO / "docs" / "decisions" / "duplicates.md"
ROW = re.compile(r"^- `(?P<a>\S+?):\d+-\d+ ~ (?P<b>\S+?):\d+-\d+[^`]*`$")
GROUP = re.compile(r"^\*\*.+\*\* \((?P<n>\d+)\)$")
STATED = re.compile(r"^The (?P<n>\d+) other production pairs of the latest run", re.M)


def _kept() -> tuple[int, list[tuple[int, list[str]]]]:
    """Return the stated count and each group's (stated count, rows) of the latest run."""
    text = RECORD.read_text(encoding="utf-8")
    stated = STATED.search(text)
    assert stated, "the record states no count of the latest run"
    end = text.find("\n## ", stated.end())
    groups: list[tuple[int, list[str]]] = []
    for line in text[stated.end() : end if end != -1 else None].splitlines():
        if header := GROUP.match(line):
            groups.append((int(header["n"]), []))
        elif line.startswith("- `"):
            assert groups, f"a row before any group: {line}"
            groups[-1][1].append(line)
    return int(stated["n"]), groups


def test_the_stated_count_is_the_rows_listed_and_each_group_counts_its_own():
    stated, groups = _kept()
    rows = [row for _, group in groups for row in group]
    assert len(rows) == stated
    assert all(count == len(group) for count, group in groups), [
        (count, len(group)) for count, group in groups if count != len(group)
    ]
    assert len(set(rows)) == len(rows), "a pair is listed twice"
    table = re.search(
        r"^\| production code without migrations \|.*\| (\d+) \|$",
        RECORD.read_text(encoding="utf-8"),
        re.M,
    )
    assert table and int(table[1]) == stated  # the table's latest column says the same


def test_every_file_a_listed_pair_names_exists():
    _, groups = _kept()
    named = set()
    for _, group in groups:
        for row in group:
            match = ROW.match(row)
            assert match, f"not a row as the tool prints it: {row}"
            named |= {match["a"], match["b"]}
    missing = sorted(path for path in named if not (REPO / path).is_file())
    assert not missing, f"the record names files that are gone: {missing}"

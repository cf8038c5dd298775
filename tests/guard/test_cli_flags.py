"""`python -m guard` builds its flags from GuardArguments (HfArgumentParser), names unchanged."""

from __future__ import annotations

import dataclasses

import pytest

from guard.cli import GuardArguments, build_parser
from guard.greedy import GuardConfig

# Every flag the hand-written parser had; scripts and docs call them by these names.
FLAGS = [
    "--input",
    "--background",
    "--output",
    "--k",
    "--attacks",
    "--budget",
    "--no-phrases",
    "--resamples",
    "--no-stop-words",
    "--rare-zipf",
    "--no-anonymize",
    "--model-dir",
    "--rules",
    "--quiet",
]
REQUIRED = ["guard", "--input", "t.jsonl", "--background", "b.jsonl"]


def _guard_parser():
    parser = build_parser()
    return parser._subparsers._group_actions[0].choices["guard"]


def test_every_flag_keeps_its_name():
    known = {s for action in _guard_parser()._actions for s in action.option_strings}
    assert set(FLAGS) <= known


def test_the_parsed_defaults_are_the_dataclass_defaults_and_the_guard_configs():
    args = vars(build_parser().parse_args(REQUIRED))
    expected = dataclasses.asdict(GuardArguments(input="t.jsonl", background="b.jsonl"))
    assert {k: args[k] for k in expected} == expected
    config = GuardConfig()
    for name in ("k", "budget", "phrases", "stop_words", "rare_zipf"):
        assert args[name] == getattr(config, name), name


@pytest.mark.parametrize(
    ("flags", "changed"),
    [
        (["--no-phrases"], {"phrases": False}),
        (["--no-stop-words"], {"stop_words": False}),
        (["--no-anonymize"], {"anonymize": False}),
        (["--quiet"], {"quiet": True}),
        (
            ["--k", "3", "--rare-zipf", "3.5", "--model-dir", "m"],
            {"k": 3, "rare_zipf": 3.5, "model_dir": "m"},
        ),
    ],
)
def test_the_old_spellings_still_set_their_fields(flags, changed):
    args = vars(build_parser().parse_args(REQUIRED + flags))
    assert {k: args[k] for k in changed} == changed


def test_input_and_background_are_required():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["guard", "--input", "t.jsonl"])

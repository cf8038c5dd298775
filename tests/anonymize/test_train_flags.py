"""`python -m anonymize train` builds its flags from TrainConfig (HfArgumentParser), names kept."""

from __future__ import annotations

import dataclasses

import pytest

from anonymize.cli import build_parser
from anonymize.train import TrainConfig


def _train_parser():
    return build_parser()._subparsers._group_actions[0].choices["train"]


def test_every_field_keeps_its_dashed_flag_and_every_bool_its_no_flag():
    known = {s for action in _train_parser()._actions for s in action.option_strings}
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        assert flag in known, flag
        if f.type in ("bool", bool):
            assert f"--no-{flag[2:]}" in known, flag


def test_the_parsed_defaults_are_the_dataclass_defaults():
    args = vars(build_parser().parse_args(["train"]))
    values = {f.name: args[f.name] for f in dataclasses.fields(TrainConfig)}
    assert values == dataclasses.asdict(TrainConfig())


@pytest.mark.parametrize(
    ("flags", "changed"),
    [
        (["--tiny-random-model"], {"tiny_random_model": True}),
        (["--no-resume"], {"resume": False}),
        (["--no-bf16", "--no-case-feature"], {"bf16": False, "case_feature": False}),
        (["--evaluate-splits", "dev", "test"], {"evaluate_splits": ["dev", "test"]}),
        (["--epochs", "2.5", "--split-seed", "7"], {"epochs": 2.5, "split_seed": 7}),
    ],
)
def test_the_old_spellings_still_set_their_fields(flags, changed):
    args = vars(build_parser().parse_args(["train", *flags]))
    assert {k: args[k] for k in changed} == changed

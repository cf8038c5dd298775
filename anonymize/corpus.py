"""Load the Textwash study corpus by path and split it by described person."""

from __future__ import annotations

import os
import random
from collections import defaultdict
from pathlib import Path

from anonymize.alignment import AlignedDocument, AlignmentReport, align_corpus, read_jsonl

SPLITS: tuple[str, ...] = ("train", "dev", "test")
STUDY_FILES: tuple[str, ...] = ("study1.jsonl", "study2.jsonl")
# The seed of the shipped model's person split; evaluation redoes that split without a manifest.
SPLIT_SEED = 13


def default_corpus_dir() -> Path:
    """Return ../shared/data/textwash_study next to the repo, or under $SHARED_DATA_DIR."""
    repo = Path(__file__).resolve().parent.parent
    shared = Path(os.environ.get("SHARED_DATA_DIR", repo.parent / "shared" / "data"))
    return shared / "textwash_study"


def load_aligned_corpus(corpus_dir: Path) -> tuple[list[AlignedDocument], AlignmentReport]:
    """Read the study files under `corpus_dir` and align every pair."""
    paths = [corpus_dir / name for name in STUDY_FILES if (corpus_dir / name).exists()]
    if not paths:
        raise FileNotFoundError(f"no {' or '.join(STUDY_FILES)} under {corpus_dir}")
    records = [record for path in paths for record in read_jsonl(path)]
    return align_corpus(records)


def split_by_person(
    documents: list[AlignedDocument], seed: int, held_out_share: float = 0.1
) -> dict[str, list[AlignedDocument]]:
    """Assign whole persons to train/dev/test so that no person appears in two splits.

    Persons are drawn per type (famous, semifamous, fictitious) so that dev and test each hold
    at least one person of every type present; a person described in both studies counts once.
    """
    persons_by_type: dict[str, set[str]] = defaultdict(set)
    for document in documents:
        persons_by_type[document.type].add(document.person)
    famous = persons_by_type.get("famous", set())
    for kind in persons_by_type:
        if kind != "famous":
            persons_by_type[kind] -= famous
    rng = random.Random(seed)
    split_of_person: dict[str, str] = {}
    for kind in sorted(persons_by_type):
        persons = sorted(persons_by_type[kind])
        rng.shuffle(persons)
        n_held = max(1, round(held_out_share * len(persons))) if len(persons) >= 3 else 0
        for position, person in enumerate(persons):
            if position < n_held:
                split_of_person[person] = "test"
            elif position < 2 * n_held:
                split_of_person[person] = "dev"
            else:
                split_of_person[person] = "train"
    splits: dict[str, list[AlignedDocument]] = {name: [] for name in SPLITS}
    for document in documents:
        splits[split_of_person[document.person]].append(document)
    return splits

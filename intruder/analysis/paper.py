"""The Textwash paper's published aggregates, shown beside a study that imports its texts.

`human_rates.csv` (in the shared textwash_study data, read by path) holds Table 3 (study 1
per type), Table 4 (study 1 famous persons), section 4.2.1 (study 2 overall) and Table 7
(study 2 persons). A study "imports the same texts" when its texts' external ids are record
ids of study1.jsonl / study2.jsonl (the researcher import keeps the record id as
external_id and the `person` field as the target name).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from research_data import textwash_study_dir
from research_data.json_lines import read_json_lines

STUDY_FILES = {1: "study1.jsonl", 2: "study2.jsonl"}
PAPER_COLUMNS = ["mean_cosine", "sd_cosine", "pct_identified", "se_pct_identified"]
# Self-report agreement published in footnotes 9 (study 1) and 12 (study 2).
PAPER_AGREEMENT = {1: 92.43, 2: 78.38}


def textwash_data_dir(base: Path | str | None = None) -> Path:
    """Return the textwash_study folder: `base`, $SHARED_DATA_DIR or ../shared/data."""
    return Path(base) if base is not None else textwash_study_dir()


def load_paper_rates(data_dir: Path | str | None = None) -> pd.DataFrame | None:
    """Return human_rates.csv as a frame, or None where the file is absent."""
    path = textwash_data_dir(data_dir) / "human_rates.csv"
    if not path.is_file():
        return None
    return pd.read_csv(path)


@dataclass(frozen=True)
class PaperMatch:
    """Which paper study a study's texts come from, and how many of them match."""

    study: int
    n_matched: int
    n_texts: int


def _record_ids(path: Path) -> set[str]:
    """Return the `id` of every record of a JSONL file."""
    return {record["id"] for _, record in read_json_lines(path)}


def detect_paper_study(
    external_ids: Iterable[str], data_dir: Path | str | None = None
) -> PaperMatch | None:
    """Return the paper study (1 or 2) most of `external_ids` belong to, or None.

    None where the data are absent or fewer than half of the texts match a study's record ids.
    """
    ids = {i for i in external_ids if i}
    folder = textwash_data_dir(data_dir)
    if not ids:
        return None
    best: PaperMatch | None = None
    for study, name in STUDY_FILES.items():
        path = folder / name
        if not path.is_file():
            continue
        matched = len(ids & _record_ids(path))
        if matched and (best is None or matched > best.n_matched):
            best = PaperMatch(study, matched, len(ids))
    if best is None or best.n_matched * 2 < best.n_texts:
        return None
    return best


def beside_paper(
    rates: pd.DataFrame, paper: pd.DataFrame, study: int, by: str = "target"
) -> pd.DataFrame:
    """Return `rates` with the paper's numbers for the same persons/groups as paper_* columns.

    by="target" matches on (group, lower-case target name); by="group" on the group's ALL row.
    Rows the paper does not report keep empty paper_* columns.
    """
    published = paper[paper["study"] == study].rename(
        columns={c: f"paper_{c}" for c in PAPER_COLUMNS}
    )
    published = published.rename(columns={"type": "group"})
    if by == "group":
        published = published[published["person"] == "ALL"].drop(columns=["person", "study"])
        return rates.merge(published, on="group", how="left")
    if by != "target":
        raise ValueError("by must be 'target' or 'group'")
    published = published[published["person"] != "ALL"].drop(columns=["study"])
    keyed = rates.assign(person=rates["target_name"].str.strip().str.lower())
    return keyed.merge(published, on=["group", "person"], how="left").drop(columns=["person"])

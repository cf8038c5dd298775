"""Load the reference data format: one row per individual, one column per anonymization."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from attacks.config import AttackConfig

if TYPE_CHECKING:
    import pandas as pd


class DatasetError(ValueError):
    """Raise for input data the attack cannot use."""


@dataclass
class DocumentSet:
    """Hold documents to re-identify: doc_id -> text and doc_id -> true individual."""

    texts: dict[str, str] = field(default_factory=dict)
    true_names: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.texts)


@dataclass
class TRIADataset:
    """Hold the background knowledge and the anonymized document sets of one data file."""

    background: dict[str, str]
    document_sets: dict[str, DocumentSet]
    dev_column: str | None = None

    @property
    def method_columns(self) -> list[str]:
        """Return the anonymization columns, the dev column excluded."""
        return [c for c in self.document_sets if c != self.dev_column]

    @property
    def dev_set(self) -> DocumentSet | None:
        """Return the dev documents, or None without a dev column."""
        return self.document_sets.get(self.dev_column) if self.dev_column else None


def read_dataframe(path: str | Path) -> pd.DataFrame:
    """Read a pandas dataframe stored as JSON (records) or CSV."""
    import pandas as pd  # here, not at import: the CLI's --help and `import attacks` stay fast

    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"data file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".json":
        return pd.read_json(path)
    if suffix == ".csv":
        return pd.read_csv(path)
    raise DatasetError(f"data file {path} must end in .json or .csv")


def doc_id_for(column: str, name: str) -> str:
    """Return the document id of ``name``'s text in ``column``."""
    return f"{column}/{name}"


def _clean_text(value: object) -> str | None:
    """Return a stripped text, or None for null or blank cells."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value)
    return text if text.strip() else None


def dataset_from_dataframe(frame: pd.DataFrame, config: AttackConfig) -> TRIADataset:
    """Validate ``frame`` and split it into background knowledge and document sets."""
    name_col, bk_col = config.individual_name_column, config.background_knowledge_column
    required = [name_col, bk_col] + (
        [config.dev_set_column_name] if config.dev_set_column_name else []
    )
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DatasetError(
            f"missing column(s) {missing}; the file has {list(map(str, frame.columns))}"
        )
    text_columns = [str(c) for c in frame.columns if c not in (name_col, bk_col)]
    if not [c for c in text_columns if c != config.dev_set_column_name]:
        raise DatasetError("no anonymization column: only name, background and dev columns found")
    names = frame[name_col]
    if names.isna().any():
        raise DatasetError(f"column {name_col!r} has {int(names.isna().sum())} empty name(s)")
    names = names.astype(str)
    duplicated = sorted(set(names[names.duplicated()]))
    if duplicated:
        raise DatasetError(f"duplicate individual name(s) in {name_col!r}: {duplicated[:10]}")

    background = {}
    for name, value in zip(names, frame[bk_col], strict=True):
        text = _clean_text(value)
        if text is not None:
            background[name] = text
    if not background:
        raise DatasetError(f"background knowledge column {bk_col!r} is empty")

    document_sets = {}
    for column in text_columns:
        documents = DocumentSet()
        for name, value in zip(names, frame[column], strict=True):
            text = _clean_text(value)
            if text is not None:
                doc_id = doc_id_for(column, name)
                documents.texts[doc_id] = text
                documents.true_names[doc_id] = name
        document_sets[column] = documents
    return TRIADataset(background, document_sets, config.dev_set_column_name)


def load_dataset(path: str | Path | None, config: AttackConfig) -> TRIADataset:
    """Read and validate the data file (``path`` or ``config.data_file_path``)."""
    path = path or config.data_file_path
    if not path:
        raise DatasetError("no data file: pass a path or set data_file_path")
    return dataset_from_dataframe(read_dataframe(path), config)

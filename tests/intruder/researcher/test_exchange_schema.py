"""One column schema per table: the exports write it and the imports read it."""

from __future__ import annotations

import json

import pytest

from intruder.exchange.columns import (
    DESCRIPTION_REFERENCE_COLUMNS,
    EXTERNAL_ID_COLUMNS,
    GROUP_COLUMNS,
    NOT_IMPORTED,
    PROVENANCE_COLUMNS,
    SCHEMA,
    TARGET_KEY_COLUMNS,
    TEXT_COLUMNS,
    TextwashColumn,
)
from intruder.exchange.exports import TABLES
from intruder.exchange.imports import ImportValidationError, import_study_data
from intruder.models import Description
from tests.intruder.factories import make_study

pytestmark = pytest.mark.django_db


def test_every_exported_table_has_one_schema_in_the_same_order():
    assert list(TABLES) == list(SCHEMA)
    for table in SCHEMA.values():
        assert len(set(table.columns)) == len(table.columns), table.name


def test_a_refused_export_is_told_by_a_column_no_imported_table_has():
    imported = {c for t in SCHEMA.values() if t.imported for c in t.columns}
    for column, table in NOT_IMPORTED.items():
        assert column in SCHEMA[table].columns and not SCHEMA[table].imported
        assert column not in imported


@pytest.mark.parametrize(
    "names",
    [
        GROUP_COLUMNS,
        TEXT_COLUMNS,
        EXTERNAL_ID_COLUMNS,
        TARGET_KEY_COLUMNS,
        DESCRIPTION_REFERENCE_COLUMNS,
        PROVENANCE_COLUMNS,
    ],
)
def test_what_an_import_reads_is_an_exported_column_or_a_named_alias(names):
    """The export's spelling comes first where there is one, so an export reads back as is."""
    exported = {c for t in SCHEMA.values() if t.imported for c in t.columns}
    aliases = {*TextwashColumn, "target", "description"}
    assert all(name in exported or name in aliases for name in names)
    assert any(name in exported for name in names)


def test_a_jsonl_line_ends_at_newline_only_never_inside_a_text_at_u2028():
    study = make_study()
    row = {"text": "Line one\u2028still the same line\u0085too", "person": "ada lovelace"}
    content = json.dumps({**row, "type": "famous"}, ensure_ascii=False) + "\n"
    report = import_study_data(study=study, content=content, fmt="jsonl")
    assert report.descriptions_created == 1
    assert Description.objects.get(study=study).text == row["text"]


def test_a_bad_jsonl_line_still_names_its_line_and_reason():
    content = '{"name": "Ada", "group": "famous"}\n\n{"name": NaN}\n[1]\n'
    with pytest.raises(ImportValidationError) as caught:
        import_study_data(study=make_study(), content=content, fmt="jsonl")
    assert [str(e) for e in caught.value.errors] == [
        "line 3, field '(line)': not valid JSON: NaN is not a JSON number",
        "line 4, field '(line)': must be a JSON object",
    ]

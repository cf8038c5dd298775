"""Every export that makes sense to import imports back as it is: targets, descriptions and
anonymized texts, in CSV and JSONL, into another study and out again unchanged."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from django.utils import timezone

from intruder.exchange.exports import render_table
from intruder.exchange.imports import ImportValidationError, import_study_data
from intruder.models import AnonymizedText, Description, Study
from intruder.services.sources import descriptions_take_from_sources, study_sources_set
from tests.intruder.factories import (
    make_description,
    make_participant,
    make_study,
    make_target,
)

pytestmark = pytest.mark.django_db

# Columns the database assigns on import (ids, times of writing), not content.
ASSIGNED = {"target_id", "description_id", "text_id", "created_at", "updated_at"}


@pytest.fixture
def intruder_study() -> Study:
    """An intruder test fed by a collection study: writers' descriptions, reviewed texts."""
    collection = make_study(slug="wave-1", kind=Study.Kind.COLLECTION)
    poet = make_target(
        study=collection,
        name="Odile Farrant",
        group="semifamous",
        key="odile",
        aliases=["O. Farrant", "Dame Odile"],
    )
    sailor = make_target(study=collection, name="Bram Okonjo", key="bram")
    for pid, target in (("WRITER1", poet), ("WRITER2", sailor), ("WRITER3", poet)):
        writer = make_participant(study=collection, prolific_pid=pid)
        make_description(
            study=collection,
            target=target,
            writer=writer,
            text=f'{target.name} ("quoted", =1+2) lives by the sea.\nSecond line by {pid}.',
        )
    study = make_study(slug="intruders-1")
    study_sources_set(study=study, sources=[collection])
    descriptions_take_from_sources(study=study)
    make_description(study=study, target=study.targets.get(key="bram"), text="Bram sails.")
    for n, description in enumerate(study.descriptions.order_by("id")):
        name = description.target.name.split()[0]
        start = description.text.index(name)
        AnonymizedText.objects.create(
            description=description,
            text=description.text.replace(name, "PERSON_FIRSTNAME_1"),
            spans=[
                {
                    "start": start,
                    "end": start + len(name),
                    "text": name,
                    "category": "PERSON_FIRSTNAME",
                    "placeholder": "PERSON_FIRSTNAME_1",
                    "score": 0.91,
                }
            ],
            status=["draft", "released", "withdrawn"][n % 3],
            revision=n + 1,
            reviewed_at=timezone.now() if n % 3 == 1 else None,
        )
    return study


def frame(study: Study, table: str, fmt: str) -> pd.DataFrame:
    content = render_table(study, table, fmt)
    if fmt == "csv":
        data = pd.read_csv(io.StringIO(content), keep_default_na=False, dtype=str)
    else:
        data = pd.read_json(io.StringIO(content), lines=True, dtype=False).astype(str)
    return data.drop(columns=[c for c in data.columns if c in ASSIGNED])


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("table", ["targets", "descriptions", "anonymized_texts"])
def test_export_imports_into_another_study_and_exports_the_same(intruder_study, table, fmt):
    copy = make_study(slug=f"copy-{table}-{fmt}")
    # Anonymized texts name their description: its table goes first, as a researcher would.
    needed = {"targets": ["targets"], "descriptions": ["targets", "descriptions"]}.get(
        table, ["targets", "descriptions", "anonymized_texts"]
    )
    for part in needed:
        import_study_data(
            study=copy, content=render_table(intruder_study, part, fmt).encode(), fmt=fmt
        )
    pd.testing.assert_frame_equal(frame(copy, table, fmt), frame(intruder_study, table, fmt))


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_descriptions_export_alone_creates_its_targets(intruder_study, fmt):
    """The export names targets by `target_key` (the importer wanted `target`: issue 9)."""
    copy = make_study(slug=f"alone-{fmt}")
    report = import_study_data(
        study=copy, content=render_table(intruder_study, "descriptions", fmt), fmt=fmt
    )
    assert (report.descriptions_created, report.targets_created) == (4, 2)
    assert set(copy.targets.values_list("key", "name", "group")) == {
        ("odile", "Odile Farrant", "semifamous"),
        ("bram", "Bram Okonjo", "fictitious"),
    }


def test_provenance_survives_the_round_trip(intruder_study):
    copy = make_study(slug="provenance")
    for part in ("targets", "descriptions"):
        import_study_data(study=copy, content=render_table(intruder_study, part, "csv"), fmt="csv")
    taken = copy.descriptions.exclude(provenance={}).order_by("id")
    assert [d.provenance["writer_pid"] for d in taken] == ["WRITER1", "WRITER2", "WRITER3"]
    assert {d.provenance["source_study"] for d in taken} == {"wave-1"}


def test_reimporting_into_the_same_study_is_refused_not_duplicated(intruder_study):
    before = Description.objects.count()
    for table in ("descriptions", "anonymized_texts"):
        with pytest.raises(ImportValidationError) as error:
            import_study_data(
                study=intruder_study, content=render_table(intruder_study, table, "csv"), fmt="csv"
            )
        assert "already" in str(error.value)
    assert Description.objects.count() == before


@pytest.mark.parametrize("table", ["judgments", "participants"])
def test_judgments_and_participants_exports_are_refused_with_the_reason(intruder_study, table):
    content = render_table(intruder_study, table, "jsonl")
    if not content:  # no judgment yet: give the importer the export's header as a row
        content = '{"judgment_id": 1, "text": "x"}\n'
    with pytest.raises(ImportValidationError, match="are not imported"):
        import_study_data(study=make_study(), content=content, fmt="jsonl")


def test_anonymized_text_for_an_unknown_description_names_line_and_field():
    study = make_study()
    content = (
        '{"description_external_id": "nope-1", "method": "m", "text": "PRONOUN sails.",'
        ' "spans": []}\n'
    )
    with pytest.raises(ImportValidationError) as error:
        import_study_data(study=study, content=content, fmt="jsonl")
    assert str(error.value.errors[0]) == (
        "line 1, field 'description_external_id': no description 'nope-1' in the study: "
        "import the descriptions first"
    )


def test_spans_outside_the_description_are_refused(intruder_study):
    copy = make_study(slug="bad-spans")
    import_study_data(
        study=copy, content=render_table(intruder_study, "descriptions", "jsonl"), fmt="jsonl"
    )
    reference = copy.descriptions.first().external_id
    content = (
        f'{{"description_external_id": "{reference}", "method": "m", "text": "x",'
        ' "spans": [{"start": 0, "end": 99999, "category": "LOCATION"}]}\n'
    )
    with pytest.raises(ImportValidationError, match="lies outside the text"):
        import_study_data(study=copy, content=content, fmt="jsonl")

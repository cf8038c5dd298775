"""Annotation formats: round-trips, TAB's exact structure, and malformed files rejected."""

import json

import pytest

from anonymize.annotations.formats import (
    FormatError,
    doccano_lines,
    read_csv,
    read_doccano,
    read_documents,
    read_system_output,
    read_tab,
    system_output_to_json,
    tab_documents_to_json,
    write_csv,
)
from anonymize.annotations.schema import AnnotatedDocument, Mention, snap_to_words

TEXT = "Zoë 🧑‍🔬 Amundsen met Ola in Tromsø 🏔 on 3 May."


def at(value: str) -> tuple[int, int]:
    start = TEXT.index(value)
    return start, start + len(value)


def document() -> AnnotatedDocument:
    return AnnotatedDocument(
        "doc-1",
        TEXT,
        {
            "ann": [
                Mention(*at("Zoë"), "PERSON", "doc-1_ann_e1", "DIRECT", edit_type="check"),
                Mention(*at("Amundsen"), "PERSON", "doc-1_ann_e1", "DIRECT", edit_type="correct"),
                Mention(*at("Tromsø"), "LOC", "doc-1_ann_e2", "QUASI", "NOT_CONFIDENTIAL"),
            ],
            "bob": [
                Mention(*at("Ola"), "PERSON", "doc-1_bob_e1", "QUASI", "ETHNIC", mention_id="m9"),
                Mention(*at("3 May"), "DATETIME", "doc-1_bob_e2", "NO_MASK"),
            ],
        },
        dataset_type="test",
    )


def comparable(documents):
    return [
        (
            d.doc_id,
            d.text,
            d.dataset_type,
            {
                a: sorted(
                    (
                        m.start,
                        m.end,
                        m.entity_type,
                        m.entity_id,
                        m.identifier_type,
                        m.confidential_status,
                        m.edit_type,
                    )
                    for m in ms
                )
                for a, ms in d.annotations.items()
            },
        )
        for d in documents
    ]


def test_tab_export_has_exactly_tabs_fields_with_python_offsets():
    (exported,) = tab_documents_to_json([document()])
    assert set(exported) >= {"doc_id", "text", "dataset_type", "annotations"}
    first = exported["annotations"]["ann"]["entity_mentions"][1]
    assert set(first) == {
        "entity_mention_id",
        "entity_id",
        "entity_type",
        "identifier_type",
        "confidential_status",
        "start_offset",
        "end_offset",
        "span_text",
        "edit_type",
    }
    # Offsets count code points: the emoji sequence before "Amundsen" is 4 characters.
    assert TEXT[first["start_offset"] : first["end_offset"]] == first["span_text"] == "Amundsen"


def test_tab_round_trip():
    raw = json.dumps(tab_documents_to_json([document()]), ensure_ascii=False, indent=1)
    assert comparable(read_tab(raw.encode())) == comparable([document()])


def test_doccano_round_trip_keeps_coreference():
    lines = doccano_lines([document()])
    ann = next(line for line in lines if line["annotator"] == "ann")
    assert ann["relations"] == [{"id": 1, "from_id": 1, "to_id": 2, "type": "coreference"}]
    raw = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines)
    assert comparable(read_doccano(raw)) == comparable([document()])


def test_doccano_relations_group_mentions_without_entity_ids():
    line = {
        "id": 7,
        "text": "Ann met Ann.",
        "label": [[0, 3, "PERSON"], [8, 11, "PERSON"]],
        "entities": [
            {"id": 1, "start_offset": 0, "end_offset": 3, "label": "PERSON"},
            {"id": 2, "start_offset": 8, "end_offset": 11, "label": "PERSON"},
        ],
        "relations": [{"id": 1, "from_id": 1, "to_id": 2, "type": "coreference"}],
    }
    (doc,) = read_doccano(json.dumps(line))
    first, second = doc.annotations["doccano"]
    assert first.entity_id == second.entity_id


def test_csv_round_trip(tmp_path):
    path = tmp_path / "mentions.csv"
    write_csv([document()], path)
    back = read_csv(path.read_bytes(), {"doc-1": TEXT})
    for d in back:
        d.dataset_type = "test"
    assert comparable(back) == comparable([document()])


def test_system_output_round_trip_merges_overlaps():
    spans = {"doc-1": [(5, 9), (0, 3), (2, 4)]}
    assert system_output_to_json(spans) == {"doc-1": [[0, 4], [5, 9]]}
    assert read_system_output(json.dumps({"doc-1": [[0, 4]]}), {"doc-1": TEXT}) == {
        "doc-1": [(0, 4)]
    }


BAD_TAB = [
    ('{"doc_id": 1}', 1, "JSON list"),
    ('[\n{"doc_id": "a", "text": "x"}\n]', 2, "misses field 'annotations'"),
    (
        '[\n{"doc_id": "a",\n "text": "Ann",\n "annotations": {"x": {"entity_mentions": [\n'
        '  {"entity_id": "e", "entity_type": "PERSON", "identifier_type": "DIRECT",\n'
        '   "start_offset": 0, "end_offset": 9}]}}}\n]',
        5,
        "offsets [0, 9)",
    ),
    (
        '[\n{"doc_id": "a", "text": "Ann", "annotations": {"x": {"entity_mentions": [\n'
        '  {"entity_id": "e", "entity_type": "PERSON", "identifier_type": "SECRET",\n'
        '   "start_offset": 0, "end_offset": 3}]}}}\n]',
        3,
        "identifier_type 'SECRET'",
    ),
    (
        '[\n{"doc_id": "a", "text": "Ann", "annotations": {"x": {"entity_mentions": [\n'
        '  {"entity_id": "e", "entity_type": "PERSON", "identifier_type": "QUASI",\n'
        '   "start_offset": 0, "end_offset": 3, "span_text": "Bob"}]}}}\n]',
        3,
        "span_text",
    ),
    (
        '[\n{"doc_id": "a", "text": "Ann", "annotations": {\n'
        ' "x": {"entity_mentions": [{"entity_id": "e", "entity_type": "P",'
        ' "identifier_type": "QUASI", "start_offset": 0, "end_offset": 3}]},\n'
        ' "y": {"entity_mentions": [{"entity_id": "e", "entity_type": "P",'
        ' "identifier_type": "QUASI", "start_offset": 0, "end_offset": 3}]}}}\n]',
        4,
        "unique across annotators",
    ),
    (
        '[\n{"doc_id": "a", "text": "Ann",\n "annotations": {}}\n,\n{"doc_id": "a", "text": "B",'
        ' "annotations": {}}]',
        5,
        "appears twice",
    ),
    ('[{"doc_id": "a",\n "text": "Ann", "annotations": {}', 2, "malformed JSON"),
]


@pytest.mark.parametrize(("content", "line", "reason"), BAD_TAB)
def test_malformed_tab_files_name_the_line_and_reason(content, line, reason):
    with pytest.raises(FormatError) as error:
        read_tab(content)
    assert error.value.line == line
    assert reason in error.value.reason


@pytest.mark.parametrize(
    ("content", "line", "reason"),
    [
        ('{"id": 1, "text": "Ann"}\n{"id": 2, "text": ', 2, "malformed JSON"),
        ('{"id": 1}\n', 1, "missing string field 'text'"),
        ('\n\n{"id": 1, "text": "Ann", "label": [[0, 5, "PERSON"]]}', 3, "offsets [0, 5)"),
        ('{"id": 1, "text": "Ann", "entities": [{"start_offset": 0}]}', 1, "needs start_offset"),
        ("[1, 2]\n", 1, "JSON object"),
    ],
)
def test_malformed_doccano_lines_are_rejected(content, line, reason):
    with pytest.raises(FormatError) as error:
        read_doccano(content)
    assert (error.value.line, reason in error.value.reason) == (line, True)


def test_malformed_csv_names_line_and_field():
    header = "doc_id,annotator,start_offset,end_offset,entity_type,identifier_type\n"
    with pytest.raises(FormatError, match=r"line 3: field 'start_offset': 'x'"):
        read_csv(header + "d,a,0,3,PERSON,DIRECT\nd,a,x,3,PERSON,DIRECT\n", {"d": "Ann"})
    with pytest.raises(FormatError, match=r"line 2: field 'doc_id'"):
        read_csv(header + "zz,a,0,3,PERSON,DIRECT\n", {"d": "Ann"})
    with pytest.raises(FormatError, match="misses column"):
        read_csv("doc_id,text\n", {})
    with pytest.raises(FormatError, match=r"line 1: not valid UTF-8"):
        read_csv(b"\xff\xfe", {})


def test_system_output_offsets_are_checked_against_the_texts():
    with pytest.raises(FormatError, match="not in the project"):
        read_system_output('{"x": []}', {"d": "Ann"})
    with pytest.raises(FormatError, match=r"line 2: .*offsets \[0, 9\)"):
        read_system_output('{\n"d": [[0, 9]]}', {"d": "Ann"})
    with pytest.raises(FormatError, match="not \\[start, end\\]"):
        read_system_output('{"d": [[0]]}', {"d": "Ann"})


def test_plain_documents_from_txt_csv_and_jsonl():
    assert read_documents("a.txt", "Hello")[0].doc_id == "a"
    csv_docs = read_documents("b.csv", "id,text,dataset_type\n1,Ann,test\n2,Bob,\n")
    assert [(d.doc_id, d.dataset_type) for d in csv_docs] == [("1", "test"), ("2", "train")]
    assert read_documents("c.jsonl", '{"id": "x", "text": "Ann"}\n')[0].text == "Ann"
    with pytest.raises(FormatError, match="line 3: field 'text' is empty"):
        read_documents("b.csv", "id,text\n1,Ann\n2,\n")
    with pytest.raises(FormatError, match=r"use a \.txt"):
        read_documents("d.pdf", "x")


@pytest.mark.parametrize(
    ("text", "selection", "expected"),
    [
        ("Marta Lindqvist lives", (2, 9), "Marta Lindqvist"),
        ("  Oslo  ", (0, 8), "Oslo"),
        ("Tromsø 🏔 Zoë", (8, 10), "Zoë"),
        ("Hello, world", (0, 6), "Hello,"),
        ("   ", (0, 3), ""),
    ],
)
def test_selections_snap_to_whole_words(text, selection, expected):
    start, end = snap_to_words(text, *selection)
    assert text[start:end] == expected

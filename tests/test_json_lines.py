"""The one JSON Lines reader: line numbers, line ends, bad bytes and bad JSON, per line."""

from __future__ import annotations

import io
import json

import pytest

from research_data.json_lines import JsonLineError, json_lines, json_values, loads, read_json_lines


def _errors(source, **kwargs) -> list[tuple[int, str, str]]:
    return [
        (line.number, line.error.kind, line.error.reason)
        for line in json_lines(source, **kwargs)
        if line.error is not None
    ]


def test_lines_are_numbered_from_one_and_blank_lines_keep_their_numbers():
    text = '{"a": 1}\n\n   \n{"b": 2}\r\n'
    assert [(line.number, line.value) for line in json_lines(text)] == [
        (1, {"a": 1}),
        (4, {"b": 2}),
    ]


def test_a_line_ends_at_newline_only_never_inside_a_string_at_u2028():
    text = json.dumps({"text": "a\u2028b\u0085c\rd"}, ensure_ascii=False) + "\n"
    assert list(json_values(text)) == [(1, {"text": "a\u2028b\u0085c\rd"})]


@pytest.mark.parametrize(
    "source", ['{"a": 1}\n[2]\n', b'{"a": 1}\n[2]\n', io.BytesIO(b'{"a": 1}\n[2]\n')]
)
def test_text_bytes_and_open_files_read_alike(source):
    assert list(json_values(source)) == [(1, {"a": 1}), (2, [2])]


def test_a_byte_order_mark_before_the_first_line_is_dropped():
    assert list(json_values("\ufeff[1]\n[2]")) == [(1, [1]), (2, [2])]
    assert list(json_values(b"\xef\xbb\xbf[1]")) == [(1, [1])]


def test_a_bad_byte_spoils_its_line_only_and_is_named_with_its_column():
    lines = list(json_lines(b'["ok"]\n["\xff"]\n["fine"]'))
    assert [line.value for line in lines] == [["ok"], None, ["fine"]]
    error = lines[1].error
    assert (error.kind, error.number, error.column, error.byte) == ("encoding", 2, 3, 0xFF)


def test_every_way_a_line_fails_comes_back_with_its_reason():
    text = "\n".join(["{", "[" * 100_000, "1" * 5000, "NaN", "1e999"])
    errors = _errors(text)
    assert errors[:2] == [
        (1, "syntax", "Expecting property name enclosed in double quotes"),
        (2, "depth", "nested too deeply"),
    ]
    assert errors[2][:2] == (3, "number") and errors[2][2].startswith("Exceeds the limit")
    assert len(errors) == 3  # NaN and 1e999 are Python's JSON, refused only when strict
    assert _errors("NaN\n1e999", strict=True) == [
        (1, "number", "NaN is not a JSON number"),
        (2, "number", "number '1e999' is out of range"),
    ]


def test_loads_names_the_column_of_a_syntax_error():
    with pytest.raises(JsonLineError) as caught:
        loads('{"a": }')
    assert (str(caught.value), caught.value.column) == ("Expecting value", 7)


def test_json_values_and_read_json_lines_raise_naming_the_line(tmp_path):
    with pytest.raises(JsonLineError) as caught:
        list(json_values("[1]\n\n[2,"))
    assert caught.value.number == 3
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"id": 1}\n{"id": \n')
    with pytest.raises(JsonLineError, match=r"rows\.jsonl, line 2: Expecting value"):
        list(read_json_lines(path))
    path.write_bytes(b'{"id": 1}\n\n{"id": 2}\n')
    assert list(read_json_lines(path)) == [(1, {"id": 1}), (3, {"id": 2})]

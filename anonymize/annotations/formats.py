"""Read and write annotations: TAB's standoff JSON, TAB's system output, doccano JSONL and CSV.

Readers validate everything before returning anything and raise `FormatError` naming the line
and the reason, so a malformed file is rejected whole. Writers produce exactly what TAB's
`evaluation.py` reads: a list of documents with `doc_id`, `text`, `dataset_type` and
`annotations: {annotator: {"entity_mentions": [...]}}`, and `{doc_id: [[start, end], ...]}`.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from anonymize.annotations.schema import (
    CONFIDENTIAL_STATUSES,
    DATASET_TYPES,
    EDIT_TYPES,
    IDENTIFIER_TYPES,
    AnnotatedDocument,
    Mention,
)
from csv_safe import SafeDictReader, SafeDictWriter
from research_data.json_lines import JsonLineError, json_lines

CSV_FIELDS: tuple[str, ...] = (
    "doc_id",
    "annotator",
    "entity_mention_id",
    "entity_id",
    "entity_type",
    "identifier_type",
    "confidential_status",
    "start_offset",
    "end_offset",
    "span_text",
    "edit_type",
)
COREFERENCE = "coreference"


class FormatError(ValueError):
    """A file that cannot be read; `line` is 1-based (0 when the whole file is wrong)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}" if line else reason)
        self.line = line
        self.reason = reason


def _decode(data: bytes | str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise FormatError(line, f"not valid UTF-8 (byte 0x{data[error.start]:02x})") from None


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _int(value: object, what: str, line: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(line, f"{what} must be an integer, got {value!r}")
    return value


def _choice(value: object, allowed: tuple[str, ...], what: str, line: int) -> str:
    if value not in allowed:
        raise FormatError(line, f"{what} {value!r} is not one of {', '.join(allowed)}")
    return value  # type: ignore[return-value]


def _check_offsets(text: str, start: int, end: int, line: int) -> None:
    if not 0 <= start < end <= len(text):
        raise FormatError(
            line, f"offsets [{start}, {end}) are not a non-empty span of the {len(text)}-char text"
        )


def mention_from_dict(item: object, text: str, line: int) -> Mention:
    """Return a Mention from one TAB entity mention object, validating every field."""
    if not isinstance(item, dict):
        raise FormatError(line, "an entity mention must be a JSON object")
    for key in ("entity_id", "entity_type", "identifier_type", "start_offset", "end_offset"):
        if key not in item:
            raise FormatError(line, f"entity mention misses field '{key}'")
    start = _int(item["start_offset"], "start_offset", line)
    end = _int(item["end_offset"], "end_offset", line)
    _check_offsets(text, start, end, line)
    if "span_text" in item and item["span_text"] != text[start:end]:
        raise FormatError(
            line,
            f"span_text {item['span_text']!r} differs from the text at [{start}, {end}): "
            f"{text[start:end]!r} (offsets must be Python character offsets)",
        )
    entity_type = item["entity_type"]
    if not isinstance(entity_type, str) or not entity_type.strip():
        raise FormatError(line, "entity_type must be a non-empty string")
    related = item.get("related_mentions") or []
    if not isinstance(related, list) or not all(isinstance(r, str) for r in related):
        raise FormatError(line, "related_mentions must be a list of mention ids")
    return Mention(
        start=start,
        end=end,
        entity_type=entity_type.strip(),
        entity_id=str(item["entity_id"]),
        identifier_type=_choice(item["identifier_type"], IDENTIFIER_TYPES, "identifier_type", line),
        confidential_status=_choice(
            item.get("confidential_status", "NOT_CONFIDENTIAL"),
            CONFIDENTIAL_STATUSES,
            "confidential_status",
            line,
        ),
        edit_type=_choice(item.get("edit_type", "insert"), EDIT_TYPES, "edit_type", line),
        mention_id=str(item.get("entity_mention_id", "")),
        related_mentions=tuple(related),
    )


def mention_to_dict(mention: Mention, text: str) -> dict[str, object]:
    """Return one TAB entity mention object."""
    item: dict[str, object] = {
        "entity_mention_id": mention.mention_id,
        "entity_id": mention.entity_id,
        "entity_type": mention.entity_type,
        "identifier_type": mention.identifier_type,
        "confidential_status": mention.confidential_status,
        "start_offset": mention.start,
        "end_offset": mention.end,
        "span_text": text[mention.start : mention.end],
        "edit_type": mention.edit_type,
    }
    if mention.related_mentions:
        item["related_mentions"] = list(mention.related_mentions)
    return item


def _loads(text: str, line: int = 1) -> object:
    """Parse JSON; every way it can fail (syntax, nesting depth, huge integers) names the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FormatError(
            line + error.lineno - 1, f"malformed JSON ({error.msg}, column {error.colno})"
        ) from None
    except RecursionError:
        raise FormatError(line, "JSON nested too deeply") from None
    except ValueError as error:  # e.g. an integer of more than 4300 digits
        raise FormatError(line, f"unreadable JSON value ({str(error).split(';')[0]})") from None


def _top_level_items(text: str) -> list[tuple[object, int]]:
    """Decode a JSON list and return each element with the line it starts on."""
    decoder = json.JSONDecoder()
    position = len(text) - len(text.lstrip())
    if not text[position:].startswith("["):
        _loads(text)
        raise FormatError(1, "a TAB gold file must be a JSON list of documents")
    _loads(text)
    items: list[tuple[object, int]] = []
    position += 1
    whitespace = re.compile(r"[\s,]*")
    while True:
        position = whitespace.match(text, position).end()
        if text[position] == "]":
            return items
        item, end = decoder.raw_decode(text, position)
        items.append((item, _line_of(text, position)))
        position = end


def read_tab(data: bytes | str) -> list[AnnotatedDocument]:
    """Parse a TAB gold file; every document and mention is validated as TAB's script would."""
    text = _decode(data)
    documents: list[AnnotatedDocument] = []
    seen_docs: set[str] = set()
    entity_owner: dict[str, str] = {}
    for item, doc_line in _top_level_items(text):
        if not isinstance(item, dict):
            raise FormatError(doc_line, "each document must be a JSON object")
        for key in ("doc_id", "text", "annotations"):
            if key not in item:
                raise FormatError(doc_line, f"document misses field '{key}'")
        doc_id, body = str(item["doc_id"]), item["text"]
        if not isinstance(body, str):
            raise FormatError(doc_line, f"document {doc_id}: 'text' must be a string")
        if doc_id in seen_docs:
            raise FormatError(doc_line, f"doc_id {doc_id!r} appears twice")
        seen_docs.add(doc_id)
        dataset_type = item.get("dataset_type", "train")
        if not isinstance(dataset_type, str):
            raise FormatError(doc_line, f"document {doc_id}: dataset_type must be a string")
        annotations = item["annotations"]
        if not isinstance(annotations, dict):
            raise FormatError(doc_line, f"document {doc_id}: 'annotations' must be an object")
        document = AnnotatedDocument(
            doc_id=doc_id,
            text=body,
            dataset_type=dataset_type,
            meta={k: v for k, v in item.items() if k not in ("doc_id", "text", "annotations")},
        )
        raw_doc = text[_offset_of_line(text, doc_line) :]
        for annotator, layer in annotations.items():
            if not isinstance(layer, dict) or not isinstance(layer.get("entity_mentions"), list):
                raise FormatError(
                    doc_line, f"document {doc_id}, annotator {annotator!r}: needs entity_mentions"
                )
            mentions = []
            lines = _mention_lines(raw_doc, annotator, len(layer["entity_mentions"]), doc_line)
            for mention_item, line in zip(layer["entity_mentions"], lines, strict=True):
                mention = mention_from_dict(mention_item, body, line)
                owner = entity_owner.setdefault(f"{doc_id}\x00{mention.entity_id}", annotator)
                if owner != annotator:
                    raise FormatError(
                        line,
                        f"entity_id {mention.entity_id!r} is used by annotators {owner!r} and "
                        f"{annotator!r}; TAB needs entity ids unique across annotators",
                    )
                mentions.append(mention)
            document.annotations[str(annotator)] = mentions
        documents.append(document)
    return documents


def _offset_of_line(text: str, line: int) -> int:
    position = 0
    for _ in range(line - 1):
        position = text.index("\n", position) + 1
    return position


def _mention_lines(raw_doc: str, annotator: str, count: int, doc_line: int) -> list[int]:
    """Return the line of each mention of `annotator` (best effort: the document's line)."""
    key = raw_doc.find(json.dumps(annotator))
    lines = []
    if key >= 0:
        for match in re.finditer(r"\{", raw_doc[key:]):
            if len(lines) == count + 1:
                break
            lines.append(doc_line + raw_doc.count("\n", 0, key + match.start()))
    lines = lines[1:]  # the annotator's own {"entity_mentions": ...} object
    return lines + [doc_line] * (count - len(lines))


def tab_documents_to_json(documents: Iterable[AnnotatedDocument]) -> list[dict]:
    """Return TAB's gold structure; raise ValueError if an entity id is shared by annotators."""
    result = []
    for document in documents:
        owners: dict[str, str] = {}
        annotations = {}
        for annotator, mentions in document.annotations.items():
            for mention in mentions:
                if owners.setdefault(mention.entity_id, annotator) != annotator:
                    raise ValueError(f"entity id {mention.entity_id} used by two annotators")
            annotations[annotator] = {
                "entity_mentions": [
                    mention_to_dict(m, document.text)
                    for m in sorted(mentions, key=lambda m: (m.start, m.end))
                ]
            }
        result.append(
            {
                **{k: v for k, v in document.meta.items() if k != "dataset_type"},
                "doc_id": document.doc_id,
                "text": document.text,
                "dataset_type": document.dataset_type,
                "annotations": annotations,
            }
        )
    return result


def write_tab(documents: Iterable[AnnotatedDocument], path: Path) -> None:
    """Write a TAB gold file."""
    path.write_text(
        json.dumps(tab_documents_to_json(documents), ensure_ascii=False, indent=1),
        encoding="utf-8",
    )


def read_system_output(
    data: bytes | str, texts: dict[str, str] | None = None
) -> dict[str, list[tuple[int, int]]]:
    """Parse TAB's system output `{doc_id: [[start, end], ...]}`; check offsets if texts given."""
    text = _decode(data)
    parsed = _loads(text)
    if not isinstance(parsed, dict):
        raise FormatError(1, "system output must map document ids to lists of [start, end]")
    result: dict[str, list[tuple[int, int]]] = {}
    for doc_id, spans in parsed.items():
        line = _line_of(text, max(text.find(json.dumps(doc_id)), 0))
        if texts is not None and doc_id not in texts:
            raise FormatError(line, f"document {doc_id!r} is not in the project")
        if not isinstance(spans, list):
            raise FormatError(line, f"document {doc_id!r}: masked spans must be a list")
        result[doc_id] = []
        for span in spans:
            if not isinstance(span, list | tuple) or len(span) != 2:
                raise FormatError(line, f"document {doc_id!r}: {span!r} is not [start, end]")
            start, end = _int(span[0], "start", line), _int(span[1], "end", line)
            if texts is not None:
                _check_offsets(texts[doc_id], start, end, line)
            elif not 0 <= start < end:
                raise FormatError(line, f"document {doc_id!r}: [{start}, {end}) is empty")
            result[doc_id].append((start, end))
    return result


def system_output_to_json(spans: dict[str, list[tuple[int, int]]]) -> dict[str, list[list[int]]]:
    """Return TAB's system-output structure with spans sorted and merged where they touch."""
    return {
        doc_id: [list(s) for s in merge_spans(doc_spans)] for doc_id, doc_spans in spans.items()
    }


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return sorted spans with overlapping ones merged."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


# doccano ------------------------------------------------------------------------------------


def doccano_lines(documents: Iterable[AnnotatedDocument]) -> list[dict]:
    """Return doccano sequence-labelling records, one per document and annotator.

    Mentions are doccano `entities` (with TAB's attributes kept as extra keys) and co-reference
    is a `relations` chain of type "coreference" between consecutive mentions of an entity.
    """
    lines = []
    for document in documents:
        for annotator, mentions in document.annotations.items():
            ordered = sorted(mentions, key=lambda m: (m.start, m.end))
            entities, relations, last_of_entity = [], [], {}
            for number, mention in enumerate(ordered, start=1):
                entities.append(
                    {
                        "id": number,
                        "label": mention.entity_type,
                        "start_offset": mention.start,
                        "end_offset": mention.end,
                        "entity_id": mention.entity_id,
                        "identifier_type": mention.identifier_type,
                        "confidential_status": mention.confidential_status,
                        "edit_type": mention.edit_type,
                    }
                )
                if mention.entity_id in last_of_entity:
                    relations.append(
                        {
                            "id": len(relations) + 1,
                            "from_id": last_of_entity[mention.entity_id],
                            "to_id": number,
                            "type": COREFERENCE,
                        }
                    )
                last_of_entity[mention.entity_id] = number
            lines.append(
                {
                    "id": document.doc_id,
                    "text": document.text,
                    "annotator": annotator,
                    "dataset_type": document.dataset_type,
                    "entities": entities,
                    "relations": relations,
                }
            )
    return lines


def _doccano_mentions(record: dict, line: int, annotator: str, doc_id: str) -> list[Mention]:
    text = record["text"]
    raw = record.get("entities", record.get("label", []))
    if not isinstance(raw, list):
        raise FormatError(line, "'entities' (or 'label') must be a list")
    spans = []
    for item in raw:
        if isinstance(item, list) and len(item) == 3:  # doccano's older [start, end, label]
            item = {"start_offset": item[0], "end_offset": item[1], "label": item[2]}
        if not isinstance(item, dict) or "label" not in item:
            raise FormatError(line, f"entity {item!r:.80} needs start_offset, end_offset and label")
        if not _is_id(item.get("id", 0)):
            raise FormatError(line, f"entity id {item.get('id')!r:.80} must be a number or string")
        spans.append(item)
    # Co-reference: explicit entity ids, else the union of "coreference" relations.
    parent = {item.get("id", n): item.get("id", n) for n, item in enumerate(spans)}

    def find(node):
        while parent[node] != node:
            node = parent[node]
        return node

    relations = record.get("relations", []) or []
    if not isinstance(relations, list):
        raise FormatError(line, "'relations' must be a list")
    for relation in relations:
        if isinstance(relation, dict) and relation.get("type") == COREFERENCE:
            a, b = relation.get("from_id"), relation.get("to_id")
            if not (_is_id(a) and _is_id(b)) or a not in parent or b not in parent:
                raise FormatError(line, f"relation {relation!r} names an unknown entity")
            parent[find(a)] = find(b)
    mentions = []
    for n, item in enumerate(spans):
        key = item.get("entity_id") or f"{doc_id}_{annotator}_{find(item.get('id', n))}"
        mentions.append(
            mention_from_dict(
                {
                    "entity_id": key,
                    "entity_type": item["label"],
                    "identifier_type": item.get("identifier_type", "QUASI"),
                    "confidential_status": item.get("confidential_status", "NOT_CONFIDENTIAL"),
                    "edit_type": item.get("edit_type", "insert"),
                    "start_offset": item.get("start_offset"),
                    "end_offset": item.get("end_offset"),
                },
                text,
                line,
            )
        )
    return mentions


def read_doccano(data: bytes | str, default_annotator: str = "doccano") -> list[AnnotatedDocument]:
    """Parse doccano JSONL (one line per document and annotator) into documents."""
    documents: dict[str, AnnotatedDocument] = {}
    for line, record in _jsonl_records(_decode(data)):
        if "text" not in record or not isinstance(record["text"], str):
            raise FormatError(line, "missing string field 'text'")
        raw_id = record.get("id", record.get("doc_id", f"line-{line}"))
        if not _is_id(raw_id):
            raise FormatError(line, f"field 'id': {raw_id!r:.80} must be a number or string")
        doc_id = str(raw_id)
        annotator = record.get("annotator", default_annotator)
        if not isinstance(annotator, str) or not annotator:
            raise FormatError(line, "field 'annotator' must be a non-empty string")
        if not isinstance(record.get("dataset_type", "train"), str):
            raise FormatError(line, "field 'dataset_type' must be a string")
        document = documents.setdefault(
            doc_id,
            AnnotatedDocument(
                doc_id, record["text"], dataset_type=str(record.get("dataset_type", "train"))
            ),
        )
        if document.text != record["text"]:
            raise FormatError(line, f"document {doc_id!r} appears with two different texts")
        if annotator in document.annotations:
            raise FormatError(line, f"document {doc_id!r} has two lines for {annotator!r}")
        document.annotations[annotator] = _doccano_mentions(record, line, annotator, doc_id)
    return list(documents.values())


def _is_id(value: object) -> bool:
    """Return whether a doccano id is usable: an integer (not a bool) or a string."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _jsonl_records(text: str) -> list[tuple[int, dict]]:
    records = []
    for parsed in json_lines(text):
        line, record, error = parsed.number, parsed.value, parsed.error
        if error is not None:
            raise FormatError(line, _json_problem(error))
        if not isinstance(record, dict):
            raise FormatError(line, "each line must be a JSON object")
        records.append((line, record))
    return records


def _json_problem(error: JsonLineError) -> str:
    """Word a JSON line's error as `_loads` words a whole file's."""
    if error.kind == "depth":
        return "JSON nested too deeply"
    if error.kind == "number":
        return f"unreadable JSON value ({error.reason})"
    return f"malformed JSON ({error.reason}, column {error.column})"


# CSV ----------------------------------------------------------------------------------------


def csv_rows(documents: Iterable[AnnotatedDocument]) -> list[dict[str, object]]:
    """Return one CSV row per mention (columns `CSV_FIELDS`)."""
    rows = []
    for document in documents:
        for annotator, mentions in document.annotations.items():
            for mention in sorted(mentions, key=lambda m: (m.start, m.end)):
                rows.append(
                    {"doc_id": document.doc_id, "annotator": annotator}
                    | mention_to_dict(mention, document.text)
                )
    return rows


def write_csv(documents: Iterable[AnnotatedDocument], path: Path) -> None:
    """Write the mentions as CSV (texts are not repeated; they live with the project)."""
    with path.open("w", encoding="utf-8", newline="") as sink:
        writer = SafeDictWriter(sink, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(csv_rows(documents))


def _csv_rows(reader: SafeDictReader) -> Iterator[dict]:
    """Yield the reader's rows; a malformed line or a short/long row names its line."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise FormatError(reader.line_num or 1, f"unreadable CSV ({error})") from None
        if None in row:
            raise FormatError(reader.line_num, "more values than header columns")
        yield row


def read_csv(data: bytes | str, texts: dict[str, str]) -> list[AnnotatedDocument]:
    """Parse mention rows against the project's texts (`{doc_id: text}`)."""
    reader = SafeDictReader(io.StringIO(_decode(data)))
    missing = [
        f
        for f in ("doc_id", "annotator", "start_offset", "end_offset", "entity_type")
        if f not in (reader.fieldnames or [])
    ]
    if missing:
        raise FormatError(1, f"CSV header misses column(s) {', '.join(missing)}")
    documents: dict[str, AnnotatedDocument] = {}
    for row in _csv_rows(reader):
        line = reader.line_num
        doc_id = row["doc_id"]
        if doc_id not in texts:
            raise FormatError(line, f"field 'doc_id': {doc_id!r} is not a document of the project")
        item: dict[str, object] = {k: v for k, v in row.items() if v not in (None, "")}
        for key in ("start_offset", "end_offset"):
            try:
                item[key] = int(row[key])
            except (TypeError, ValueError):
                raise FormatError(line, f"field '{key}': {row[key]!r} is not an integer") from None
        item.setdefault("identifier_type", "QUASI")
        item.setdefault("entity_id", f"{doc_id}_{row['annotator']}_{item['start_offset']}")
        document = documents.setdefault(doc_id, AnnotatedDocument(doc_id, texts[doc_id]))
        document.annotations.setdefault(row["annotator"], []).append(
            mention_from_dict(item, texts[doc_id], line)
        )
    return list(documents.values())


# Plain documents ----------------------------------------------------------------------------


def read_documents(name: str, data: bytes | str) -> list[AnnotatedDocument]:
    """Read texts to annotate from a .txt (one document), .csv (id, text) or .jsonl file.

    JSONL lines may carry doccano annotations (`entities`/`label`), which come along.
    """
    text = _decode(data)
    suffix = Path(name).suffix.lower()
    if suffix == ".txt":
        if not text.strip():
            raise FormatError(1, "the file is empty")
        return [AnnotatedDocument(Path(name).stem, text)]
    if suffix == ".csv":
        reader = SafeDictReader(io.StringIO(text))
        if "text" not in (reader.fieldnames or []):
            raise FormatError(1, "CSV header needs a 'text' column (and optionally 'id')")
        documents = []
        for row in _csv_rows(reader):
            if not (row.get("text") or "").strip():
                raise FormatError(reader.line_num, "field 'text' is empty")
            documents.append(
                AnnotatedDocument(
                    row.get("id") or row.get("doc_id") or f"{Path(name).stem}-{reader.line_num}",
                    row["text"],
                    dataset_type=_dataset_type(row.get("dataset_type"), reader.line_num),
                )
            )
        return _unique(documents)
    if suffix in (".jsonl", ".json"):
        documents = read_doccano(text)
        for document in documents:
            _dataset_type(document.dataset_type, 0)
        return documents
    raise FormatError(0, f"{name}: use a .txt, .csv or .jsonl file")


def _dataset_type(value: str | None, line: int) -> str:
    if not value:
        return "train"
    return _choice(value, DATASET_TYPES, "field 'dataset_type'", line)


def _unique(documents: list[AnnotatedDocument]) -> list[AnnotatedDocument]:
    seen: set[str] = set()
    for number, document in enumerate(documents, start=2):
        if document.doc_id in seen:
            raise FormatError(number, f"id {document.doc_id!r} appears twice")
        seen.add(document.doc_id)
    return documents

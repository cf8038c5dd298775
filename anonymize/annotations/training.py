"""Turn exported annotations (TAB JSON) into training data for the PSI tagger.

Each annotator's layer becomes one training document, as TAB trained its Longformer ("we
treat all annotations as equally correct and duplicate the document for each distinct
annotation layer", section 7.2). Mentions marked DIRECT or QUASI label their words with the
model's category (TAB categories are mapped, `TAB_TO_MODEL`); NO_MASK mentions and
unannotated words are NONE. Documents keep their `dataset_type` split; a corpus without dev or
test documents gets a deterministic hold-out by document, so no text is in two splits.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from anonymize.alignment import AlignedDocument
from anonymize.annotations.formats import read_tab
from anonymize.annotations.schema import AnnotatedDocument
from anonymize.corpus import SPLITS
from anonymize.labels import CATEGORIES, NONE, split_words

TAB_TO_MODEL: dict[str, str] = {
    "LOC": "LOCATION",
    "ORG": "ORGANIZATION",
    "DATETIME": "DATE",
    "QUANTITY": "NUMERIC",
    "CODE": "OTHER_IDENTIFYING_ATTRIBUTE",
    "DEM": "OTHER_IDENTIFYING_ATTRIBUTE",
    "MISC": "OTHER_IDENTIFYING_ATTRIBUTE",
}
# Share of documents held out for dev and for test when the file names no splits.
HELD_OUT_SHARE = 0.15


@dataclass
class AnnotationReport:
    """What the mapping kept and changed, saved in the training manifest."""

    documents: int = 0
    layers: int = 0
    mentions_masked: int = 0
    mentions_no_mask: int = 0
    mapped_categories: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, object]:
        """Return the report as a JSON-ready dict."""
        return {
            "source": "annotations",
            "documents": self.documents,
            "annotation_layers": self.layers,
            "mentions_masked": self.mentions_masked,
            "mentions_no_mask": self.mentions_no_mask,
            "mapped_categories": dict(self.mapped_categories),
        }


def model_category(entity_type: str, word_index: int) -> str:
    """Return the model's category for a word of a mention (TAB PERSON -> first/last name)."""
    if entity_type in CATEGORIES:
        return entity_type
    if entity_type == "PERSON":
        return "PERSON_FIRSTNAME" if word_index == 0 else "PERSON_LASTNAME"
    return TAB_TO_MODEL.get(entity_type, "OTHER_IDENTIFYING_ATTRIBUTE")


def layer_document(
    document: AnnotatedDocument, annotator: str, report: AnnotationReport
) -> AlignedDocument:
    """Return one annotator's layer as word labels (BIO) the trainer understands."""
    words = split_words(document.text)
    labels: list[str | None] = [NONE] * len(words)
    for mention in sorted(document.annotations[annotator], key=lambda m: m.start):
        if not mention.masked:
            report.mentions_no_mask += 1
            continue
        report.mentions_masked += 1
        inside = [i for i, w in enumerate(words) if w.start < mention.end and w.end > mention.start]
        for offset, position in enumerate(inside):
            category = model_category(mention.entity_type, offset)
            if category != mention.entity_type:
                report.mapped_categories[f"{mention.entity_type}->{category}"] += 1
            first = offset == 0 or category != model_category(mention.entity_type, offset - 1)
            labels[position] = f"{'B' if first else 'I'}-{category}"
    return AlignedDocument(
        id=f"{document.doc_id}#{annotator}",
        person=document.doc_id,
        type=document.dataset_type,
        text=document.text,
        words=words,
        labels=labels,
    )


def _held_out_split(doc_id: str, seed: int) -> str:
    draw = int(hashlib.sha256(f"{seed}:{doc_id}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    if draw < HELD_OUT_SHARE:
        return "test"
    return "dev" if draw < 2 * HELD_OUT_SHARE else "train"


def annotation_splits(
    path: Path, seed: int
) -> tuple[dict[str, list[AlignedDocument]], AnnotationReport]:
    """Read a TAB gold file and return train/dev/test training documents and a report."""
    documents = read_tab(Path(path).read_bytes())
    report = AnnotationReport(documents=len(documents))
    named = {d.dataset_type for d in documents}
    splits: dict[str, list[AlignedDocument]] = {name: [] for name in SPLITS}
    for document in documents:
        split = document.dataset_type
        if not {"dev", "test"} <= named or split not in SPLITS:
            split = _held_out_split(document.doc_id, seed)
        for annotator in document.annotations:
            report.layers += 1
            splits[split].append(layer_document(document, annotator, report))
    if not splits["train"]:
        raise ValueError(f"{path}: no training documents (dataset_type 'train')")
    return splits, report


def score_before(base_model: str, splits: dict[str, list[AlignedDocument]], threads: int):
    """Score the starting model on the held-out test layers, for a before/after comparison.

    Returns {} when the starting point is not a trained PSI tagger (e.g. the raw MiniLM).
    """
    from anonymize.evaluate import evaluate_documents
    from anonymize.model import Anonymizer

    if not base_model or not splits["test"]:
        return {}
    try:
        anonymizer = Anonymizer.load(base_model, threads=threads)
    except (FileNotFoundError, StopIteration, KeyError):
        return {}
    return {"before_test": evaluate_documents(anonymizer, splits["test"])}

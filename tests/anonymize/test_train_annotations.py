"""`python -m anonymize train --annotations FILE`: exported annotations become training data."""

from __future__ import annotations

import io
import json

from anonymize.annotations.formats import write_tab
from anonymize.annotations.schema import AnnotatedDocument, Mention
from anonymize.annotations.training import AnnotationReport, annotation_splits, layer_document
from anonymize.cli import main

PEOPLE = [
    ("Orla Brennick", "Dunmore", "nurse"),
    ("Quentin Asplund", "Harrowgate", "baker"),
    ("Saoirse Kell", "Tromsø", "pilot"),
    ("Ivo Marsh", "Drosselford", "teacher"),
    ("Lena Voskuijl", "Wexmoor", "welder"),
    ("Tariq Benn", "Oldcastle", "chemist"),
]


def at(text: str, value: str) -> tuple[int, int]:
    start = text.index(value)
    return start, start + len(value)


def corpus() -> list[AnnotatedDocument]:
    documents = []
    for number, (name, place, job) in enumerate(PEOPLE):
        text = f"{name} works as a {job} in {place}. Everyone in {place} knows {name.split()[0]}."
        mentions = [
            Mention(*at(text, name), "PERSON", f"p{number}", "DIRECT"),
            Mention(*at(text, place), "LOC", f"l{number}", "QUASI"),
            Mention(*at(text, job), "DEM", f"j{number}", "NO_MASK"),
        ]
        split = ("train", "train", "train", "train", "dev", "test")[number]
        documents.append(
            AnnotatedDocument(f"d{number}", text, {"anna": mentions}, dataset_type=split)
        )
    return documents


def test_tab_categories_map_to_the_models_and_no_mask_stays_none():
    (document,) = corpus()[:1]
    aligned = layer_document(document, "anna", AnnotationReport())
    labels: dict[str, str] = {}
    for word, label in zip(aligned.words, aligned.labels, strict=True):
        labels.setdefault(word.text, label)  # first occurrence: the annotated one
    assert labels["Orla"] == "B-PERSON_FIRSTNAME" and labels["Brennick"] == "B-PERSON_LASTNAME"
    assert labels["Dunmore"] == "B-LOCATION"
    assert labels["nurse"] == "NONE"  # NO_MASK: the annotator decided it needs no masking


def test_each_annotation_layer_is_one_training_document_in_its_split(tmp_path):
    path = tmp_path / "gold.json"
    documents = corpus()
    person = documents[0].annotations["anna"][0]
    documents[0].annotations["ben"] = [Mention(person.start, person.end, "PERSON", "b0", "DIRECT")]
    write_tab(documents, path)
    splits, report = annotation_splits(path, seed=1)
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [5, 1, 1]
    assert report.layers == 7 and report.mentions_no_mask == 6


def test_train_on_annotations_reports_before_and_after(tmp_path):
    path = tmp_path / "gold.json"
    write_tab(corpus(), path)
    common = [
        "--tiny-random-model",
        "--max-steps",
        "2",
        "--batch-size",
        "4",
        "--max-length",
        "32",
        "--stride",
        "24",
        "--threads",
        "1",
        "--annotations",
        str(path),
    ]
    first = tmp_path / "first"
    assert main(["train", "--output-dir", str(first), *common], stdout=io.StringIO()) == 0
    manifest = json.loads((first / "training_manifest.json").read_text())
    assert manifest["alignment"]["source"] == "annotations"
    assert manifest["split_documents"] == {"train": 4, "dev": 1, "test": 1}

    stdout = io.StringIO()
    second = tmp_path / "second"
    args = ["train", "--output-dir", str(second), "--base-model", str(first), *common]
    args.remove("--tiny-random-model")
    assert main(args, stdout=stdout) == 0
    # The starting model is scored on the same held-out texts as the fine-tuned one.
    assert "before_test: weighted F1 (PSI)" in stdout.getvalue()
    assert "test: weighted F1 (PSI)" in stdout.getvalue()

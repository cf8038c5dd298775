"""The risk guard: greedy masking until the attacks rank the person at k or worse."""

from __future__ import annotations

import io
import json

import pytest

from anonymize import Span
from anonymize.labels import GUARD_CATEGORY
from guard import GuardConfig, GuardItem, fit_attacks, guard_texts, ordinal
from guard.cli import main as guard_main
from guard.document import prepare_documents
from guard.scorers import scorer_for

# Made-up persons: everyone paints and teaches; only Zora loves origami. Zora sorts last, so
# a tie between persons (ranked in name order, as the attacks do) never favours her.
BACKGROUND = {
    "alma": "Alma paints rivers and teaches drawing. She loves pottery at home. Alma paints.",
    "bruno": "Bruno paints rivers and teaches drawing. He loves chess at home. Bruno paints.",
    "cleo": "Cleo paints rivers and teaches drawing. She loves baking at home. Cleo paints.",
    "dario": "Dario paints rivers and teaches drawing. He loves jazz at home. Dario paints.",
    "zora": "Zora paints rivers and teaches drawing. She loves origami at home. Zora paints.",
}
TEXT = "PERSON paints rivers and teaches drawing, and loves origami."
NAME_SPAN = [Span(0, 6, "PERSON", "PERSON_FIRSTNAME", "", 1.0)]


@pytest.fixture(scope="module")
def attacks():
    """Fit TF-IDF and BM25 on the made-up background once."""
    return fit_attacks(BACKGROUND, ["tfidf", "bm25"])


def test_guard_masks_exactly_the_identifying_word_and_reaches_k(attacks):
    item = GuardItem("d1", TEXT, "zora", list(NAME_SPAN))
    [result] = guard_texts([item], attacks, GuardConfig(k=2))
    assert result.ranks_before == {"tfidf": 1, "bm25": 1}
    assert result.masked_words == ["origami"]
    assert all(rank >= 2 for rank in result.ranks_after.values())
    assert not result.flagged
    guard_spans = [s for s in result.spans if s.category == GUARD_CATEGORY]
    assert [(s.text, s.placeholder) for s in guard_spans] == [("origami", "REIDENTIFYING_1")]
    assert "origami" not in result.text and "REIDENTIFYING_1" in result.text
    assert NAME_SPAN[0].start == result.spans[0].start  # the anonymizer's spans stay


@pytest.mark.parametrize("k", [2, 3, 4])
def test_reported_ranks_are_the_attacks_own_and_unmet_k_is_flagged(attacks, k):
    item = GuardItem("d1", TEXT, "zora", list(NAME_SPAN))
    [result] = guard_texts([item], attacks, GuardConfig(k=k))
    for name, attack in attacks.items():
        [prediction] = attack.predict({"d1": result.text}, true_names={"d1": "zora"})
        assert result.ranks_after[name] == prediction.true_rank
        assert prediction.true_rank >= k or result.flagged


def test_budget_stops_masking_and_flags_the_text(attacks):
    text = "PERSON loves origami; origami and more origami, she paints rivers."
    item = GuardItem("d2", text, "zora", list(NAME_SPAN))
    # Three occurrences of the one identifying word, but only one word may be masked.
    [result] = guard_texts([item], attacks, GuardConfig(k=2, budget=0.1))
    assert result.flagged
    assert result.reason.startswith("budget spent")
    assert result.ranks_after["tfidf"] == 1
    assert result.words_masked_by_guard <= 1


def test_text_already_k_anonymous_is_left_alone(attacks):
    item = GuardItem("d3", "PERSON teaches drawing.", "zora", list(NAME_SPAN))
    [result] = guard_texts([item], attacks, GuardConfig(k=2))
    assert result.steps == [] and result.masked_words == [] and not result.flagged
    assert result.text == "PERSON_FIRSTNAME_1 teaches drawing."


def test_exact_scorers_match_the_attacks_predict_on_rendered_text(attacks):
    [document] = prepare_documents([("d1", TEXT, "zora", NAME_SPAN)])
    maskings = [frozenset(), *(u.tokens for u in document.units(frozenset()))]
    for name, attack in attacks.items():
        _, ranks = scorer_for(name, attack).outcomes(document, maskings)
        texts = {str(i): document.render(m) for i, m in enumerate(maskings)}
        truth = dict.fromkeys(texts, "zora")
        real = [p.true_rank for p in attack.predict(texts, true_names=truth)]
        assert list(ranks) == real, name


def test_one_run_answers_every_smaller_k(attacks):
    item = GuardItem("d1", TEXT, "zora", list(NAME_SPAN))
    [result] = guard_texts([item], attacks, GuardConfig(k=4, checkpoints=(2,)))
    text_k2, _, words_k2, flagged_k2 = result.at_k(2)
    for attack in attacks.values():
        [prediction] = attack.predict({"d1": text_k2}, true_names={"d1": "zora"})
        assert prediction.true_rank >= 2
    assert not flagged_k2 and words_k2 <= result.words_masked_by_guard
    assert "origami" not in text_k2


@pytest.mark.parametrize(
    ("rank", "read"),
    [
        (1, "1st"),
        (2, "2nd"),
        (3, "3rd"),
        (4, "4th"),
        (5, "5th"),
        (11, "11th"),
        (12, "12th"),
        (13, "13th"),
        (21, "21st"),
        (22, "22nd"),
        (101, "101st"),
        (111, "111th"),
        (999, "999th"),
    ],
)
def test_refusals_read_a_rank_as_an_ordinal(rank, read):
    assert ordinal(rank) == read


def test_config_rejects_k_below_two_and_bad_budgets():
    with pytest.raises(ValueError, match="k must be at least 2"):
        GuardConfig(k=1)
    with pytest.raises(ValueError, match="budget"):
        GuardConfig(budget=0)


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_cli_guards_jsonl_with_spans(tmp_path):
    texts, background, output = tmp_path / "t.jsonl", tmp_path / "b.jsonl", tmp_path / "o.jsonl"
    spans = [{"start": 0, "end": 6, "category": "PERSON_FIRSTNAME"}]
    _write_jsonl(texts, [{"id": "d1", "text": TEXT, "target": "zora", "spans": spans}])
    _write_jsonl(background, [{"name": n, "text": t} for n, t in BACKGROUND.items()])
    stderr = io.StringIO()
    argv = ["guard", "--input", str(texts), "--background", str(background), "--k", "2"]
    code = guard_main([*argv, "--output", str(output), "--quiet"], stderr=stderr)
    assert code == 0, stderr.getvalue()
    [row] = [json.loads(line) for line in output.read_text().splitlines()]
    assert row["masked_words"] == ["origami"] and row["flagged"] is False
    assert row["ranks_before"] == {"tfidf": 1, "bm25": 1}
    assert "1 texts guarded, 0 flagged" in stderr.getvalue()


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "d1", "text": TEXT}, "line 1: missing or non-string field 'target'"),
        ({"id": "d1", "text": TEXT, "target": "zoe", "spans": []}, "targets without background"),
        (
            {"id": "d1", "text": TEXT, "target": "zora", "spans": [{"start": 0, "end": 999}]},
            "spans[0]: needs integer start, end and a category",
        ),
        (
            {
                "id": "d1",
                "text": TEXT,
                "target": "zora",
                "spans": [{"start": 0, "end": 6, "category": "NAME"}],
            },
            "unknown category 'NAME'",
        ),
    ],
)
def test_cli_bad_input_names_the_line_and_field(tmp_path, row, message):
    texts, background = tmp_path / "t.jsonl", tmp_path / "b.jsonl"
    _write_jsonl(texts, [row])
    _write_jsonl(background, [{"name": n, "text": t} for n, t in BACKGROUND.items()])
    stderr = io.StringIO()
    code = guard_main(
        ["guard", "--input", str(texts), "--background", str(background)], stderr=stderr
    )
    assert code == 2
    assert message in stderr.getvalue()


def test_cli_no_anonymize_guards_rows_without_spans_as_they_are(tmp_path):
    texts, background, output = tmp_path / "t.jsonl", tmp_path / "b.jsonl", tmp_path / "o.jsonl"
    _write_jsonl(texts, [{"id": "d1", "text": "She paints and loves origami.", "target": "zora"}])
    _write_jsonl(background, [{"name": n, "text": t} for n, t in BACKGROUND.items()])
    argv = ["guard", "--input", str(texts), "--background", str(background), "--k", "2"]
    code = guard_main([*argv, "--no-anonymize", "--output", str(output), "--quiet"])
    assert code == 0
    [row] = [json.loads(line) for line in output.read_text().splitlines()]
    assert [s["category"] for s in row["spans"]] == [GUARD_CATEGORY]
    assert row["ranks_after"]["tfidf"] >= 2


def test_attacks_without_an_exact_scorer_are_asked_through_predict(attacks):
    # Under another name the TF-IDF attack is scored leave-one-out through its own predict,
    # the path dense retrieval and TRIA take.
    item = GuardItem("d1", TEXT, "zora", list(NAME_SPAN))
    [result] = guard_texts([item], {"generic": attacks["tfidf"]}, GuardConfig(k=2))
    assert result.masked_words == ["origami"]
    assert result.ranks_before == {"generic": 1} and result.ranks_after["generic"] >= 2


def test_capitalised_pronoun_the_curation_keeps_is_masked_when_it_singles_out():
    # Only "She" tells Zoe from Bruno here; the curation keeps it (capitalised), so the
    # lexical attacks count it and the guard may mask it. (Zoe sorts last: ties never help.)
    background = {
        "bruno": "Bruno teaches drawing. He paints rivers.",
        "zoe": "Zoe teaches drawing. She paints rivers.",
    }
    attacks = fit_attacks(background, ["tfidf"])
    item = GuardItem("d4", "PERSON teaches drawing. She paints rivers.", "zoe", list(NAME_SPAN))
    [result] = guard_texts([item], attacks, GuardConfig(k=2))
    assert result.ranks_before == {"tfidf": 1}
    assert result.masked_words == ["She"] and not result.flagged
    [without] = guard_texts([item], attacks, GuardConfig(k=2, stop_words=False))
    assert without.flagged and "She" not in without.masked_words


def test_every_inflection_of_a_masked_word_goes_with_it():
    # "kites" and "kite" share a lemma: masking one form while the other stays would leave
    # the lemma the attacks count.
    attacks = fit_attacks({"bruno": "Bruno loves chess.", "zoe": "Zoe loves kites."}, ["tfidf"])
    text = "PERSON owns two kites. Her kite is red."
    [result] = guard_texts(
        [GuardItem("d5", text, "zoe", list(NAME_SPAN))], attacks, GuardConfig(k=2)
    )
    assert sorted(result.masked_words) == ["kite", "kites"] and not result.flagged
    assert "kite" not in result.text


def test_rare_word_the_background_never_saw_is_masked_first(attacks):
    # Nobody's background mentions quokkas, so the guard's attacks cannot weigh the word;
    # it is rare in English, so another attacker's background may well single Zora out by it.
    text = "PERSON teaches drawing and keeps quokkas."
    item = GuardItem("d6", text, "zora", list(NAME_SPAN))
    [plain] = guard_texts([item], attacks, GuardConfig(k=2))
    assert plain.masked_words == []  # already rank >= 2: nothing to do
    [result] = guard_texts([item], attacks, GuardConfig(k=2, rare_zipf=3.5, checkpoints=(2,)))
    assert result.masked_words == ["quokkas"] and not result.flagged
    assert result.steps[0].value == "rare, unseen: quokkas"
    text_k2, _, words, flagged = result.at_k(2)
    assert "quokkas" not in text_k2 and words == 1 and not flagged
    with pytest.raises(ValueError, match="rare_zipf"):
        GuardConfig(rare_zipf=0)


def test_resampled_backgrounds_are_guarded_against_too():
    # Each person has two texts; each resample keeps one of them, so the guard must also beat
    # attacks that saw only part of what the person's background holds.
    background = {
        "alma": ["Alma paints rivers.", "She loves pottery."],
        "bruno": ["Bruno paints rivers.", "He loves chess."],
        "zora": ["Zora paints rivers.", "She loves origami and kites."],
    }
    attacks = fit_attacks(background, ["tfidf"], resamples=2, seed=1)
    assert sorted(attacks) == ["tfidf", "tfidf~1", "tfidf~2"]
    assert all(
        type(s).__name__ == "TFIDFScorer" for s in map(scorer_for, attacks, attacks.values())
    )
    item = GuardItem("d7", "PERSON loves origami and kites.", "zora", list(NAME_SPAN))
    [plain] = guard_texts([item], {"tfidf": attacks["tfidf"]}, GuardConfig(k=2, budget=1.0))
    [result] = guard_texts([item], attacks, GuardConfig(k=2, budget=1.0))
    assert set(result.ranks_after) == set(attacks)
    assert not result.flagged and all(rank >= 2 for rank in result.ranks_after.values())
    # Beating every resample takes at least what beating the full background took.
    assert set(plain.masked_words) <= set(result.masked_words)


def test_the_manuals_guard_command_runs_on_the_example_files(tmp_path):
    """docs/guard.md's command, as printed, on the examples (3 persons): its k is reachable.

    Its input is the anonymizer's output; here the names are masked by spans made from the
    targets' keys, so the test needs no model.
    """
    import re
    import shlex
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    manual = (repo / "docs" / "guard.md").read_text(encoding="utf-8").replace("\\\n", " ")
    [command] = [line for line in manual.splitlines() if line.startswith("python -m guard guard")]
    argv = shlex.split(command)[4:]
    assert argv[argv.index("--input") + 1] == "runs/anonymized.jsonl"
    rows = []
    for line in (repo / "docs/examples/descriptions.jsonl").read_text().splitlines():
        row = json.loads(line)
        names = "|".join(part.title() for part in row["target"].split("-"))
        row["spans"] = [
            {"start": m.start(), "end": m.end(), "category": "PERSON_LASTNAME"}
            for m in re.finditer(rf"\b(?:{names})\b", row["text"])
        ]
        rows.append(row)
    _write_jsonl(tmp_path / "anonymized.jsonl", rows)
    argv = [
        str(tmp_path / Path(a).name) if a.startswith("runs/") else str(repo / a) if "/" in a else a
        for a in argv
    ]
    stderr = io.StringIO()
    assert guard_main(["guard", *argv, "--quiet"], stderr=stderr) == 0, stderr.getvalue()
    out = [json.loads(line) for line in (tmp_path / "guarded.jsonl").read_text().splitlines()]
    assert [r["id"] for r in out] == ["ex-1", "ex-2", "ex-3", "ex-4"]
    k = int(argv[argv.index("--k") + 1])
    for row in out:
        reached = all(rank >= k for rank in row["ranks_after"].values())
        assert reached or row["flagged"], row

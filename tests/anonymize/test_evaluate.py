"""Word-level scoring: per-category P/R/F1, binary PSI and the name-leak check."""

from __future__ import annotations

import pytest

from anonymize.alignment import align_record
from anonymize.evaluate import (
    evaluate_predictions,
    score_word_categories,
    word_categories_from_spans,
)
from anonymize.labels import split_words
from anonymize.placeholders import Span


def test_scores_count_each_word_once():
    gold = ["LOCATION", "LOCATION", "NONE", "DATE", "NONE"]
    predicted = ["LOCATION", "NONE", "NONE", "LOCATION", "DATE"]
    metrics = score_word_categories(gold, predicted)
    location = metrics["per_category"]["LOCATION"]
    assert (location["precision"], location["recall"], location["support"]) == (0.5, 0.5, 2)
    assert metrics["per_category"]["DATE"]["f1"] == 0.0
    # Binary: gold PSI at 0, 1, 3; predicted PSI at 0, 3, 4 -> tp 2, fp 1, fn 1.
    assert metrics["binary_psi"]["precision"] == pytest.approx(2 / 3)
    assert metrics["binary_psi"]["recall"] == pytest.approx(2 / 3)
    assert metrics["psi_categories"]["weighted"]["f1"] == pytest.approx((2 * 0.5 + 1 * 0) / 3)


@pytest.mark.parametrize(
    ("spans", "expected"),
    [
        ([], ["NONE"] * 4),
        (
            [Span(0, 8, "Ana Lima", "PERSON_FIRSTNAME", "", 1.0)],
            ["PERSON_FIRSTNAME", "PERSON_FIRSTNAME", "NONE", "NONE"],
        ),
        ([Span(13, 17, "Rome", "LOCATION", "", 1.0)], ["NONE", "NONE", "NONE", "LOCATION"]),
    ],
)
def test_words_take_the_category_of_the_span_covering_them(spans, expected):
    words = split_words("Ana Lima went Rome")
    assert word_categories_from_spans(words, spans) == expected


def test_a_surviving_name_counts_as_a_leak():
    document = align_record(
        {
            "id": "x",
            "person": "ana lima",
            "type": "fictitious",
            "original": "Ana Lima sings. Lima smiles.",
            "textwash": "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 sings. PERSON_LASTNAME_1 smiles.",
        }
    )
    # Words: Ana Lima sings . Lima smiles .
    masked = ["PERSON_FIRSTNAME", "PERSON_LASTNAME", "NONE", "NONE", "PERSON_LASTNAME"]
    masked += ["NONE", "NONE"]
    leaking = list(masked)
    leaking[4] = "NONE"  # the second "Lima" stays in clear
    assert evaluate_predictions([document], [masked])["name_leak"]["rate"] == 0.0
    assert evaluate_predictions([document], [leaking])["name_leak"]["documents_leaking"] == 1


def test_threshold_is_chosen_on_dev_and_near_ties_go_to_the_stricter_one(
    fake_anonymizer_factory,
):
    from anonymize.evaluate import choose_threshold

    # The fake tags "lisbon" with P(PSI) ~ 0.88: thresholds up to 0.85 find it, 0.9 does not.
    fake = fake_anonymizer_factory({"lisbon": "LOCATION"})
    record = {
        "id": "dev_1",
        "person": "mara quillfeather",
        "type": "famous",
        "original": "She moved to Lisbon in spring.",
        "textwash": "PRONOUN moved to LOCATION_1 in spring.",
    }
    chosen = choose_threshold(fake, [align_record(record)], candidates=(0.3, 0.85, 0.9))
    scores = {row["threshold"]: row["weighted_f1_psi"] for row in chosen["candidates"]}
    assert scores[0.3] == scores[0.85] > scores[0.9]
    assert chosen["threshold"] == 0.3


def test_threshold_choice_puts_name_leaks_first(fake_anonymizer_factory):
    from anonymize.evaluate import choose_threshold

    # "Lisbon" is only found below 0.9 and is the person's surname here: 0.9 leaks it.
    fake = fake_anonymizer_factory({"lisbon": "PERSON_LASTNAME"})
    record = {
        "id": "dev_2",
        "person": "mara lisbon",
        "type": "famous",
        "original": "The singer Lisbon sang.",
        "textwash": "The singer PERSON_LASTNAME_1 sang.",
    }
    chosen = choose_threshold(fake, [align_record(record)], candidates=(0.9, 0.95))
    assert [row["name_leak_rate"] for row in chosen["candidates"]] == [1.0, 1.0]
    chosen = choose_threshold(fake, [align_record(record)], candidates=(0.5, 0.9))
    assert chosen["threshold"] == 0.5


def test_rules_ablation_scores_each_rule_and_counts_missed_psi(fake_anonymizer_factory):
    from anonymize.evaluate import rules_ablation_rows

    fake = fake_anonymizer_factory({"lisbon": "LOCATION"})
    record = {
        "id": "dev_3",
        "person": "mara quillfeather",
        "type": "famous",
        "original": "She moved to Lisbon in 1990 with 3 cats.",
        "textwash": "PRONOUN moved to LOCATION_1 in DATE_1 with NUMERIC_1 cats.",
    }
    rows = {row["rules"]: row for row in rules_ablation_rows(fake, [align_record(record)])}
    assert {"none", "digits", "default", "all"} <= set(rows)
    assert rows["digits"]["gold_psi_words_unmasked"] == rows["none"]["gold_psi_words_unmasked"] - 2
    assert rows["digits"]["weighted_f1_psi"] > rows["none"]["weighted_f1_psi"]
    assert rows["urls"] == {**rows["none"], "rules": "urls"}
    assert fake.rules == ()  # the anonymizer's own rules are restored

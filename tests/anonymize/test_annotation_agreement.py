"""Agreement measures against hand-computed values."""

import pytest

from anonymize.annotations.agreement import (
    agreement_rows,
    character_items,
    cohen_kappa,
    krippendorff_alpha,
    observed_and_fleiss,
    project_agreement,
    span_items,
)
from anonymize.annotations.schema import AnnotatedDocument, Mention

TEXT = "Ann Lee lives in Oslo and works at Acme."


def m(start, end, kind, identifier="QUASI"):
    return Mention(start, end, kind, f"{start}", identifier)


def documents():
    # A and B both mark "Ann Lee" [0, 7) as PERSON and "Oslo" [17, 21) (A: LOC, B: ORG);
    # both mark "Acme" as ORG, A as [35, 39), B with the full stop as [35, 40).
    return [
        AnnotatedDocument(
            "d",
            TEXT,
            {
                "A": [m(0, 7, "PERSON", "DIRECT"), m(17, 21, "LOC"), m(35, 39, "ORG")],
                "B": [m(0, 7, "PERSON", "DIRECT"), m(17, 21, "ORG"), m(35, 40, "ORG")],
            },
        )
    ]


def test_exact_span_items_mark_unannotated_spans():
    items = span_items(documents(), ["A", "B"], "entity_type", partial=False)
    # Units: (0,7), (17,21), (35,39), (35,40) sorted as strings.
    rows = {tuple(r) for r in items.labels}
    assert ("PERSON", "PERSON") in rows and ("LOC", "ORG") in rows
    assert ("ORG", "<not annotated>") in rows and ("<not annotated>", "ORG") in rows
    observed, _, n = observed_and_fleiss(items)
    assert n == 4 and observed == pytest.approx(1 / 4)


def test_partial_span_items_match_on_the_start_offset():
    items = span_items(documents(), ["A", "B"], "entity_type", partial=True)
    observed, fleiss, n = observed_and_fleiss(items)
    # Units by start: 0 PERSON/PERSON, 17 LOC/ORG, 35 ORG/ORG -> 2 of 3 agree.
    assert n == 3 and observed == pytest.approx(2 / 3)
    # Fleiss: category shares PERSON 2/6, LOC 1/6, ORG 3/6 -> Pe = (4 + 1 + 9) / 36.
    expected = (4 + 1 + 9) / 36
    assert fleiss == pytest.approx((2 / 3 - expected) / (1 - expected))
    # Cohen on the same two raters: po = 2/3, pe = A(P 1/3, L 1/3, O 1/3) x B(P 1/3, O 2/3)
    # = 1/9 + 0 + 2/9 = 1/3 -> kappa = (2/3 - 1/3) / (2/3) = 0.5.
    assert cohen_kappa(items) == pytest.approx(0.5)


def test_krippendorff_alpha_treats_unannotated_spans_as_missing():
    items = span_items(documents(), ["A", "B"], "entity_type", partial=False)
    # Pairable units: (0,7) PERSON/PERSON and (17,21) LOC/ORG; n = 4 values.
    # Do = 2 (one disagreeing unit counted twice) / 4 ... alpha = 1 - (n-1) Do / De:
    # coincidences: PERSON-PERSON 2, LOC-ORG 1, ORG-LOC 1; n_c: PERSON 2, LOC 1, ORG 1.
    # Do = 2/4; De = (4*4 - (4 + 1 + 1)) / (4*3) = 10/12 -> alpha = 1 - 0.5 / (10/12) = 0.4.
    assert krippendorff_alpha(items) == pytest.approx(0.4)


def test_character_items_label_every_character():
    items = character_items(documents(), ["A", "B"], "entity_type")
    assert len(items.labels) == len(TEXT)
    observed, _, _ = observed_and_fleiss(items)
    # Disagreements: "Oslo" (4 chars LOC/ORG) and the final "." (O/ORG) -> 5 of 40.
    assert observed == pytest.approx(1 - 5 / len(TEXT))


def test_project_agreement_reports_pairs_and_flattens_to_rows():
    result = project_agreement(documents())
    assert result["annotators"] == ["A", "B"] and result["documents"] == 1
    (pair,) = result["pairs"]
    assert pair["measures"]["entity_type"]["span"]["partial"]["cohen_kappa"] == pytest.approx(0.5)
    rows = agreement_rows(result)
    assert {r["scope"] for r in rows} == {"all", "pair"}
    assert len(rows) == 2 * 3 * 3  # scopes x dimensions x (span exact/partial, char exact)


def test_one_label_only_gives_no_chance_corrected_value():
    same = [AnnotatedDocument("d", "Ann", {"A": [m(0, 3, "PERSON")], "B": [m(0, 3, "PERSON")]})]
    items = span_items(same, ["A", "B"], "entity_type", partial=False)
    assert cohen_kappa(items) is None and krippendorff_alpha(items) is None
    assert observed_and_fleiss(items)[0] == 1.0

"""A small hand-computed study for the analysis tests (made-up people).

Two targets: Ann Lee (famous) and Bo Ray (fictitious). Per-text judgment cosines:

    t1 Ann  [1.0, 0.5]       mean 0.75  identified (>= 0.75, inclusive)
    t2 Ann  [0.2, 0.4, 0.0]  mean 0.20
    t3 Ann  [0.9]            mean 0.90  identified; one judgment: SD undefined
    t4 Bo   [0.1, 0.3]       mean 0.20
    t5 Bo   []               no judgments
    t6 Bo   [0.8, 0.8]       mean 0.80  identified
"""

from __future__ import annotations

import pandas as pd

THRESHOLD = 0.75
COSINES = {1: [1.0, 0.5], 2: [0.2, 0.4, 0.0], 3: [0.9], 4: [0.1, 0.3], 5: [], 6: [0.8, 0.8]}
SELF_IDENTIFIED = {
    1: [True, True],
    2: [False, False, True],
    3: [True],
    4: [False, False],
    5: [],
    6: [True, False],
}
TARGET_OF = {1: "ann", 2: "ann", 3: "ann", 4: "bo", 5: "bo", 6: "bo"}
TARGETS = {"ann": ("Ann Lee", "famous"), "bo": ("Bo Ray", "fictitious")}


def fixture_texts() -> pd.DataFrame:
    """Return the texts frame of the hand-computed study."""
    rows = []
    for text_id, key in TARGET_OF.items():
        name, group = TARGETS[key]
        rows.append(
            {
                "text_id": text_id,
                "description_id": text_id,
                "external_id": f"x{text_id}",
                "target_key": key,
                "target_name": name,
                "group": group,
                "original": f"{name} sings in London.",
                "anonymized": "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 sings in LOCATION_1.",
                "placeholders": ["PERSON_FIRSTNAME_1", "PERSON_LASTNAME_1", "LOCATION_1"],
            }
        )
    return pd.DataFrame(rows)


def fixture_judgments() -> pd.DataFrame:
    """Return the judgments frame of the hand-computed study."""
    rows, judgment_id = [], 0
    for text_id, cosines in COSINES.items():
        for index, cosine in enumerate(cosines):
            judgment_id += 1
            rows.append(
                {
                    "judgment_id": judgment_id,
                    "text_id": text_id,
                    "participant_id": 100 + index,
                    "self_identified": SELF_IDENTIFIED[text_id][index],
                    "guessed_name": "",
                    "revealing_text": "",
                    "other_knowledge": "",
                    "cosine": cosine,
                    # Stored at another threshold on purpose: analyses re-score at theirs.
                    "identified": cosine >= 0.5,
                    "token_set_ratio": 0.0,
                    "surname_match": False,
                }
            )
    return pd.DataFrame(rows)

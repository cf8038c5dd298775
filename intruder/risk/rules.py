"""When a judged text counts as identified by humans: the rules a study chooses among.

A tiny module (no pandas) so the model's field choices and the report share one home.
"""

from __future__ import annotations

# rule -> what it means, as the report and the study form say it.
IDENTIFIED_RULES: dict[str, str] = {
    "mean_cosine": "the mean name-match cosine of its judgments reaches the study's threshold "
    "(the Textwash paper)",
    "majority": "more than half of its judgments named the person",
    "any": "at least one judgment named the person",
}
DEFAULT_RULE = "mean_cosine"
RULE_CHOICES = [
    ("mean_cosine", "Mean cosine of its judgments reaches the threshold (Textwash paper)"),
    ("majority", "A majority of its judgments named the person"),
    ("any", "Any judgment named the person"),
]

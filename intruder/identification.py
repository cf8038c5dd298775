"""When a judged text counts as identified by humans: the rules a study chooses among.

A study's setting, so the core's: a tiny module (no pandas, no Django) so that the model's
field choices and the risk report share one home, and the core's models import no package.
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

"""Words that stand in person names without naming anyone: one home for both layers.

The anonymizer's corpus alignment, the intruder scoring (surname of a target) and the leak
checks (which words of an alias are identifying) all need these; the Django side imports them
from here, never the other way round. NAME_SUFFIXES lives with the guess scoring in
`model_runtime.guess_scoring` (the attacks library scores guesses too) and is re-exported
here. The honorifics Textwash writes as MR/MS or TITLE live in `anonymize.placeholders` (they
decide a marker, not just "not a name").
"""

from __future__ import annotations

from anonymize.placeholders import MR_MS_WORDS, TITLE_WORDS
from model_runtime.guess_scoring import NAME_SUFFIXES

# Particles and articles inside names and aliases ("Ludwig van Beethoven", "The Rock").
NAME_PARTICLES = frozenset({"the", "von", "van", "der", "del"})
# Words of a name or alias that identify no one on their own ("Dame Odette": only "Odette").
NON_IDENTIFYING_NAME_WORDS = MR_MS_WORDS | TITLE_WORDS | NAME_PARTICLES | NAME_SUFFIXES

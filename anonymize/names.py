"""Words that stand in person names without naming anyone: one home for both layers.

The anonymizer's corpus alignment, the intruder scoring (surname of a target) and the leak
checks (which words of an alias are identifying) all need these; the Django side imports them
from here, never the other way round. The honorifics Textwash writes as MR/MS or TITLE live in
`anonymize.placeholders` (they decide a marker, not just "not a name").
"""

from __future__ import annotations

from anonymize.placeholders import MR_MS_WORDS, TITLE_WORDS

# Generational suffixes are not surnames: "Hermann Pacocha Jr" has the surname "pacocha".
NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "v"})
# Particles and articles inside names and aliases ("Ludwig van Beethoven", "The Rock").
NAME_PARTICLES = frozenset({"the", "von", "van", "der", "del"})
# Words of a name or alias that identify no one on their own ("Dame Odette": only "Odette").
NON_IDENTIFYING_NAME_WORDS = MR_MS_WORDS | TITLE_WORDS | NAME_PARTICLES | NAME_SUFFIXES

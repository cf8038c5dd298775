"""Build a tiny synthetic re-identification dataset of made-up people (written for the tests)."""

from __future__ import annotations

import random

import pandas as pd

# Made-up individuals, each with distinctive facts; none of them exists.
PEOPLE = {
    "Orlena Vasquith": [
        "Orlena Vasquith is a glassblower from the harbour town of Quellmar",
        "Vasquith won the Amberline kiln prize for her cobalt lanterns",
        "she raced sled dogs across the Tarrow glacier every winter",
        "Orlena studied furnace chemistry at the Quellmar guild school",
    ],
    "Bastian Kreoll": [
        "Bastian Kreoll is a submarine cartographer who charted the Vennic trench",
        "Kreoll grew up on a pepper farm near Dallowmere",
        "he plays the bass clarinet in the Dallowmere municipal band",
        "Bastian published an atlas of sunken volcanoes called Deep Ember",
    ],
    "Ilse Marrowby": [
        "Ilse Marrowby is a beekeeper and chess champion from Ostrevale",
        "Marrowby invented a hexagonal hive warmed by geothermal pipes",
        "she won the Ostrevale open chess tournament seven times",
        "Ilse breeds a rare black honeybee called the Ostrevale dusk",
    ],
    "Tobiah Ferncastle": [
        "Tobiah Ferncastle is a circus acrobat turned lighthouse keeper in Gulvik",
        "Ferncastle restored the copper lens of the Gulvik lighthouse",
        "he performed the triple trapeze somersault with the Zephyrine troupe",
        "Tobiah keeps a logbook of storms and migrating puffins",
    ],
}

ANONYMIZATION_COLUMNS = ("clear_abstract", "masked_abstract")


def background_text(facts: list[str], rng: random.Random, repeats: int = 6) -> str:
    """Return a background text: the facts shuffled and repeated into a longer article."""
    sentences = [fact for _ in range(repeats) for fact in facts]
    rng.shuffle(sentences)
    return ". ".join(sentences) + "."


def synthetic_frame(seed: int = 0) -> pd.DataFrame:
    """Return a dataframe in the reference format with clear and fully masked abstracts."""
    rng = random.Random(seed)
    rows = []
    for name, facts in PEOPLE.items():
        abstract = ". ".join(facts[:3]) + "."
        rows.append(
            {
                "name": name,
                "public_knowledge": background_text(facts, rng),
                "clear_abstract": abstract,
                # Every word masked: nothing is left to tell the individuals apart.
                "masked_abstract": " ".join("***" for _ in abstract.split()),
                "dev_abstract": ". ".join(facts[1:]) + ".",
            }
        )
    return pd.DataFrame(rows)

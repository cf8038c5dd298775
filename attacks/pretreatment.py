"""Pretreat texts as every attack does (Sect. 5.3): B_D' by NER masking, then curation.

Curation lemmatizes and drops stop words and special characters; B_D' is the spaCy-NER
anonymized copy of the background knowledge B_D. Both are cached per text under
``config.cache_dir``.
"""

from __future__ import annotations

from collections.abc import Sequence

from attacks.base import ProgressCallback
from attacks.config import AttackConfig
from attacks.curation import (
    anonymize_with_ner,
    curate_texts,
    open_cache,
    open_curation_cache,
)


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

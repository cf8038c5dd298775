"""Build many k-fold backgrounds from texts pretreated once (`attacks.curation`).

An attack pretreats its background inside ``fit`` (curation, and B_D': the spaCy-NER-masked
copy). With k folds, each person's background is a different join of the same texts in
every fold, so the attack's own text cache never hits and spaCy would run k times over the
corpus. ``PreparedTexts`` pretreats every description once (cached per text), joins the
pretreated pieces per fold, and hands the attack a config that skips its own pretreatment:
the same inputs the attack would have built, at 1/k of the spaCy time.

Each person's background is one text holding B_D and then B_D' (the reference trains on
them as two documents of the same person; windows are cut from either the same way).

``PreparedTexts.fit`` returns a ``PreparedAttack``: the fitted attack together with the
pretreatment its inputs need, so callers (attack runs, the guard, benchmarks) hand it raw
texts and every path pretreats the same way, here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attacks.background import TEXT_SEPARATOR
from attacks.base import Attack
from attacks.config import AttackConfig
from attacks.curation import (
    TextCache,
    anonymize_with_ner,
    curate_texts,
    open_cache,
    open_curation_cache,
)
from attacks.prediction import Prediction
from attacks.registry import ATTACKS, get_attack

AttackFactory = Callable[[str, AttackConfig], Attack]


class PreparedAttack:
    """A fitted attack whose inputs are pretreated by ``PreparedTexts``: predict on raw texts."""

    def __init__(self, attack: Attack, prepared: PreparedTexts, curate: bool) -> None:
        self.fitted = attack
        self.prepared = prepared
        self.curate = curate

    @property
    def name(self) -> str:
        """Return the attack's registry name."""
        return self.fitted.name

    @property
    def names(self) -> list[str]:
        """Return the candidate persons, in the attack's column order."""
        return self.fitted.names

    def predict(
        self,
        documents: Mapping[str, str],
        top_k: int = 5,
        true_names: Mapping[str, str] | None = None,
        **options: Any,
    ) -> list[Prediction]:
        """Pretreat ``documents`` (id -> raw text) as the background was, then predict."""
        ids = list(documents)
        treated = self.prepared.documents([documents[i] for i in ids], curate=self.curate)
        return self.fitted.predict(
            dict(zip(ids, treated, strict=True)),
            top_k=top_k,
            true_names=dict(true_names) if true_names is not None else None,
            **options,
        )


class PreparedTexts:
    """Pretreat texts the way ``config`` asks, once per text, for any number of folds."""

    def __init__(self, config: AttackConfig) -> None:
        self.config = config
        self._curation: TextCache = open_curation_cache(
            config.cache_dir, config.placeholders_as_words
        )
        self._ner: TextCache = open_cache(config.cache_dir, "ner")

    def curates(self, attack: str) -> bool:
        """Return whether ``attack`` curates its texts under this config (dense never does)."""
        uses_curation = getattr(ATTACKS[attack], "uses_curation", True)
        return bool(uses_curation and self.config.use_document_curation)

    def attack_config(self) -> AttackConfig:
        """Return the config to build attacks with: pretreatment already done here."""
        return dataclasses.replace(
            self.config, use_document_curation=False, anonymize_background_knowledge=False
        )

    def fit(
        self,
        name: str,
        texts_by_person: Mapping[str, Sequence[str]],
        factory: AttackFactory | None = None,
    ) -> PreparedAttack:
        """Fit attack ``name`` on person -> texts pretreated here; return it ready to predict."""
        curate = self.curates(name)
        attack = (factory or get_attack)(name, self.attack_config())
        attack.fit(self.background(texts_by_person, curate=curate))
        return PreparedAttack(attack, self, curate)

    def documents(self, texts: Sequence[str], *, curate: bool) -> list[str]:
        """Return the texts as the attack would see them at prediction time."""
        if not curate:
            return list(texts)
        return curate_texts(
            texts, self._curation, placeholders_as_words=self.config.placeholders_as_words
        )

    def background(
        self, texts_by_person: Mapping[str, Sequence[str]], *, curate: bool
    ) -> dict[str, str]:
        """Return person -> B_D (and B_D' when the config asks), pretreated and joined."""
        config = self.config
        names = list(texts_by_person)
        flat = [text for name in names for text in texts_by_person[name]]
        pieces: list[list[str]] = [[] for _ in names]
        keep_clear = not (
            config.anonymize_background_knowledge
            and config.only_use_anonymized_background_knowledge
        )
        if keep_clear:
            self._extend(pieces, texts_by_person, names, self.documents(flat, curate=curate))
        if config.anonymize_background_knowledge:
            masked = anonymize_with_ner(flat, self._ner)
            self._extend(pieces, texts_by_person, names, self.documents(masked, curate=curate))
        return {name: TEXT_SEPARATOR.join(parts) for name, parts in zip(names, pieces, strict=True)}

    @staticmethod
    def _extend(
        pieces: list[list[str]],
        texts_by_person: Mapping[str, Sequence[str]],
        names: list[str],
        treated: list[str],
    ) -> None:
        position = 0
        for index, name in enumerate(names):
            count = len(texts_by_person[name])
            pieces[index].extend(treated[position : position + count])
            position += count

"""What the feature packages show on the core's researcher pages, registered by each package
when the app is ready (risk's, the rehearsal's and the LLM intruder's `researcher_parts`), so
that these pages import none of them: the one way a package joins them. A page shows what
every registered package gives, in the order they registered; without a registration it shows
none of it.

Each part is HTML the package renders from its own templates, placed by the page: the study
page's `study_panel` (a card of its own) and `anonymization` (in the anonymization card, after
its model job); the review list's `review_list` parts (panels, extra columns, a flag beside
each text); a text's review page's `text_flag`. The bulk release's confirmation reads
`machine_flags`, the texts to warn about, and says so in its own words.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from django.http import HttpRequest
from django.utils.safestring import SafeString, mark_safe

from intruder.models import AnonymizedText, Study


@dataclass(frozen=True)
class ReviewListParts:
    """A package's HTML on the review list: `panel` above the release form, `after` below it,
    `header` (<th> cells) and `cells` (text id -> <td> cells) as columns of the texts' table,
    `flags` (text id -> HTML beside that text's leak warnings)."""

    panel: str = ""
    after: str = ""
    header: str = ""
    cells: Mapping[int, str] = field(default_factory=dict)
    flags: Mapping[int, str] = field(default_factory=dict)


StudyPart = Callable[[HttpRequest, Study, bool], str]
ReviewListPart = Callable[[HttpRequest, Study, bool, Collection[AnonymizedText]], ReviewListParts]


@dataclass(frozen=True)
class ResearcherParts:
    """One package's parts, each optional: `study_panel(request, study, can_edit)` and
    `anonymization(request, study, can_edit)`: HTML on the study page;
    `review_list(request, study, can_edit, texts)`: the review list's parts for the texts it
    shows; `text_flag(request, text)`: HTML on a text's review page;
    `machine_flags(study)`: the ids of the texts the machine ranks first."""

    study_panel: StudyPart | None = None
    anonymization: StudyPart | None = None
    review_list: ReviewListPart | None = None
    text_flag: Callable[[HttpRequest, AnonymizedText], str] | None = None
    machine_flags: Callable[[Study], Collection[int]] | None = None


PARTS: dict[str, ResearcherParts] = {}


def register(package: str, parts: ResearcherParts) -> None:
    """Install a package's parts of the researcher pages (once, when the app is ready)."""
    PARTS[package] = parts


def _joined(pieces: list[str]) -> SafeString:
    # Every piece is a template's output (autoescaped), or "".
    return mark_safe("".join(pieces))


def study_parts(request: HttpRequest, study: Study, can_edit: bool) -> dict[str, SafeString]:
    """Return the study page's parts by place: `study_panel` and `anonymization`."""
    return {
        place: _joined(
            [
                part(request, study, can_edit)
                for parts in PARTS.values()
                if (part := getattr(parts, place)) is not None
            ]
        )
        for place in ("study_panel", "anonymization")
    }


def review_list_parts(
    request: HttpRequest, study: Study, can_edit: bool, texts: Collection[AnonymizedText]
) -> ReviewListParts:
    """Return every package's review-list parts for `texts`, joined."""
    found = [
        p.review_list(request, study, can_edit, texts) for p in PARTS.values() if p.review_list
    ]
    return ReviewListParts(
        panel=_joined([f.panel for f in found]),
        after=_joined([f.after for f in found]),
        header=_joined([f.header for f in found]),
        cells={t.pk: _joined([f.cells.get(t.pk, "") for f in found]) for t in texts},
        flags={t.pk: _joined([f.flags.get(t.pk, "") for f in found]) for t in texts},
    )


def text_flags(request: HttpRequest, text: AnonymizedText) -> SafeString:
    """Return every package's HTML on a text's review page, joined."""
    return _joined([p.text_flag(request, text) for p in PARTS.values() if p.text_flag])


def machine_flagged(study: Study) -> set[int]:
    """Return the ids of the texts some registered package's machine ranks first."""
    return {pk for p in PARTS.values() if p.machine_flags for pk in p.machine_flags(study)}

"""What a package shows on the core's researcher pages, registered by the package when the
app is ready (risk's `researcher_parts`), so that these pages import none of it: the one way a
package joins them. Without a registration the pages show none of it.

Each part is HTML the package renders from its own templates, placed by the page: the study
page shows `study_panel`; the review list its `review_list` parts (panels, extra columns, a
flag beside each text); a text's review page its `text_flag`. The bulk release's confirmation
reads `machine_flags`, the texts to warn about, and says so in its own words.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, fields

from django.http import HttpRequest

from intruder.models import AnonymizedText, Study


def _no_html(request: HttpRequest, study: Study, can_edit: bool) -> str:
    return ""


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


def _no_review_list(
    request: HttpRequest, study: Study, can_edit: bool, texts: Collection[AnonymizedText]
) -> ReviewListParts:
    return ReviewListParts()


def _no_text_flag(request: HttpRequest, text: AnonymizedText) -> str:
    return ""


def _no_flags(study: Study) -> Collection[int]:
    return ()


@dataclass
class ResearcherParts:
    """`study_panel(request, study, can_edit)`: HTML on the study page;
    `review_list(request, study, can_edit, texts)`: the review list's parts for the texts it
    shows; `text_flag(request, text)`: HTML on a text's review page;
    `machine_flags(study)`: the ids of the texts the machine ranks first."""

    study_panel: Callable[[HttpRequest, Study, bool], str] = _no_html
    review_list: Callable[
        [HttpRequest, Study, bool, Collection[AnonymizedText]], ReviewListParts
    ] = _no_review_list
    text_flag: Callable[[HttpRequest, AnonymizedText], str] = _no_text_flag
    machine_flags: Callable[[Study], Collection[int]] = _no_flags


PARTS = ResearcherParts()


def register(parts: ResearcherParts) -> None:
    """Install a package's parts of the researcher pages (once, when the app is ready)."""
    for part in fields(ResearcherParts):
        setattr(PARTS, part.name, getattr(parts, part.name))

"""The accessibility audit: axe-core (from npm, package.json) run inside the real page.

`scripts/setup.sh --dev` installs axe-core with `npm ci`; it is evaluated in the page by
Playwright, so it audits the page as the browser rendered it (styles, scripts and
hidden elements included). WCAG 2.x A and AA rules; serious and critical violations fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser import screenshots
from tests.passes import SECOND_DATABASE_PASS

AXE_JS = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")
WCAG_AA_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


def axe_available() -> None:
    """Skip (or under CI fail) when axe-core is not installed."""
    if AXE_JS.exists():
        return
    reason = f"axe-core not installed at {AXE_JS} (run `npm ci` or scripts/setup.sh --dev)"
    if os.environ.get("INTRUDER_REQUIRE_BROWSER") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


# The PostgreSQL pass of scripts/test.sh (INTRUDER_TEST_DATABASE_ONLY=1) runs the browser flows
# again for what the database does; the markup they render was audited in the SQLite pass.
AUDITED_IN_THE_FIRST_PASS = SECOND_DATABASE_PASS


def audit(page, name: str) -> list[str]:
    """Run axe-core on the page; return its serious/critical violations as readable lines
    (none in the PostgreSQL pass, which leaves the markup to the SQLite pass)."""
    if AUDITED_IN_THE_FIRST_PASS:
        return []
    width = page.viewport_size["width"] if page.viewport_size else 0
    screenshots.keep(page, f"{name}-{width}")
    # Evaluated over the DevTools protocol, not added as a <script> tag: the site's
    # Content-Security-Policy (docs/operations.md) refuses inline scripts without its nonce.
    page.evaluate(AXE_JS.read_text())
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, "
        "resultTypes: ['violations']})",
        WCAG_AA_TAGS,
    )
    return [
        f"{name} ({page.url}): [{v['impact']}] {v['id']}: {v['help']} -> "
        + "; ".join(" ".join(node["target"]) for node in v["nodes"][:5])
        for v in result["violations"]
        if v["impact"] in FAILING_IMPACTS
    ]

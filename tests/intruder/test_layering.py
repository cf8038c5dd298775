"""The layering of `intruder/`: no two of its sub-packages import each other, and the report
store imports none of the domains that register their pages with it (issue 42).

Function-level imports count: a cycle hidden in a function is still a cycle to a reader.
"""

from __future__ import annotations

from collections import defaultdict

from tests.test_import_cycles import ROOT, imported, production_modules

INTRUDER = ROOT / "intruder"


def subpackage(module: str) -> str | None:
    """Return the sub-package of `intruder/` that holds `module` (None for a top module)."""
    parts = module.split(".")
    if parts[0] == "intruder" and len(parts) > 1 and (INTRUDER / parts[1]).is_dir():
        return parts[1]
    return None


def subpackage_imports() -> dict[tuple[str, str], list[str]]:
    """Return (importer, imported) sub-package pairs with the modules that make each arrow."""
    modules = production_modules()
    arrows: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, path in modules.items():
        source = subpackage(name)
        if source is None:
            continue
        for target in imported(path, name, modules):
            other = subpackage(target)
            if other is not None and other != source:
                arrows[(source, other)].append(f"{name} -> {target}")
    return arrows


def test_no_two_subpackages_of_intruder_import_each_other():
    arrows = subpackage_imports()
    mutual = {
        f"{a} <-> {b}: {arrows[(a, b)][:3]} / {arrows[(b, a)][:3]}"
        for a, b in arrows
        if a < b and (b, a) in arrows
    }
    assert not mutual, "\n".join(sorted(mutual))


def test_the_report_store_imports_none_of_the_domains_that_register_pages():
    arrows = subpackage_imports()
    domains = {"risk", "analysis", "annotation", "rendering"}
    assert not [arrow for (a, b), arrow in arrows.items() if a == "reports" and b in domains]


def test_the_arrows_are_read_from_the_tree():
    """The test sees real arrows (a broken walk would pass the tests above vacuously)."""
    arrows = subpackage_imports()
    assert ("risk", "reports") in arrows and ("services", "selectors") in arrows

"""The layering of `intruder/`: no two of its sub-packages import each other, and the report
store imports none of the domains that register their pages with it (issue 42).

Function-level imports count: a cycle hidden in a function is still a cycle to a reader.
"""

from __future__ import annotations

import ast
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
    domains = {"risk", "analysis", "annotation", "evidence", "llm_intruder", "rendering"}
    assert not [arrow for (a, b), arrow in arrows.items() if a == "reports" and b in domains]


def test_the_arrows_are_read_from_the_tree():
    """The test sees real arrows (a broken walk would pass the tests above vacuously)."""
    arrows = subpackage_imports()
    assert ("risk", "reports") in arrows and ("services", "selectors") in arrows


def _core_model_names() -> set[str]:
    """Return what `intruder/models.py` defines itself (not what it imports to register)."""
    tree = ast.parse((INTRUDER / "models.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_a_packages_tables_are_imported_from_its_own_models():
    """`intruder/models.py` only registers a package's tables: nobody imports them through it
    (issue 50), so a table's owner is where its import says."""
    own = _core_model_names()
    assert {"Study", "Judgment", "FlaggedAnswer"} <= own and "AttackRun" not in own
    through_core = []
    for folder in ("intruder", "tests", "benchmarks", "scripts"):
        for path in (ROOT / folder).rglob("*.py"):
            if "migrations" in path.parts or path == INTRUDER / "models.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "intruder.models":
                    through_core += [
                        f"{path.relative_to(ROOT)}: {alias.name}"
                        for alias in node.names
                        if alias.name not in own
                    ]
    assert not through_core, through_core


def test_templates_live_beside_their_code():
    """The core's templates are in intruder/templates/, a package's in
    intruder/<package>/templates/<package>/ (issue 50): one rule, which settings' DIRS follow."""
    from django.conf import settings

    packages = {p.name for p in INTRUDER.iterdir() if (p / "__init__.py").exists()}
    core = {p.name for p in (INTRUDER / "templates").iterdir() if p.is_dir()}
    assert not core & packages, f"package templates in the core's folder: {core & packages}"
    beside = sorted(INTRUDER.glob("*/templates"))
    assert {p.parent.name for p in beside} >= {"risk", "analysis", "evidence", "prolific"}
    for folder in beside:
        assert [p.name for p in folder.iterdir()] == [folder.parent.name], folder
    assert settings.TEMPLATES[0]["DIRS"] == [INTRUDER / "templates", *beside]


# The study and participant core, cut by layer (README's code map), with what features share.
CORE = {"selectors", "services", "views", "api", "web", "rendering", "exchange", "reports"}
CORE_MODULES = {"intruder.models", "intruder.enrolment", "intruder.exceptions"}
# The two packages the core calls, each named in docs/development.md: the participant services
# record answer evidence, the study services and participant pages act on Prolific.
CALLED_BY_THE_CORE = {"evidence", "prolific"}


def test_the_core_reaches_a_feature_package_only_through_a_registry():
    """Issue 50's rule: a feature package imports the core, not the reverse (the core exposes
    registries that packages fill when the app is ready), but for the two named packages."""
    modules = production_modules()
    features = (
        {p.name for p in INTRUDER.iterdir() if (p / "__init__.py").exists()}
        - CORE
        - CALLED_BY_THE_CORE
        - {"management", "demo", "migrations"}
    )
    assert {"risk", "analysis", "llm_intruder", "rehearsal", "annotation"} <= features
    wrong = [
        f"{name} -> {target}"
        for name, path in modules.items()
        if subpackage(name) in CORE or name in CORE_MODULES
        for target in imported(path, name, modules)
        if subpackage(target) in features
    ]
    assert not wrong, wrong

"""`anonymize` and `attacks` are plain libraries: no Django, no `intruder`, not each other.

What both share (`model_runtime`) imports neither; `import attacks` does not load torch.

Each check runs in a fresh interpreter with no Django settings, imports every module of one
library, and reports which top-level packages ended up loaded.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

IMPORT_ALL = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
walked = pkgutil.walk_packages(package.__path__, package.__name__ + ".")
# __main__ runs the CLI on import; what it imports is cli, which is imported here.
modules = [m.name for m in walked if not m.name.endswith(".__main__")]
for name in modules:
    importlib.import_module(name)
print(json.dumps({"modules": modules, "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def _run_without_django(code: str, *args: str) -> dict:
    """Run `code` in a fresh interpreter with no Django settings; return its last JSON line."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _loaded_after_importing(package: str) -> dict:
    return _run_without_django(IMPORT_ALL, package)


@pytest.mark.parametrize(("package", "other"), [("anonymize", "attacks"), ("attacks", "anonymize")])
@pytest.mark.slow  # a child process imports the library and its model stack
def test_library_imports_without_django_intruder_or_the_other_library(package, other):
    result = _loaded_after_importing(package)
    assert len(result["modules"]) > 5  # every module was imported, not just the package
    loaded = set(result["loaded"])
    assert package in loaded
    assert not loaded & {"django", "rest_framework", "intruder", "guard", other}


def test_the_llm_client_imports_neither_library():
    result = _loaded_after_importing("llm")
    assert {"llm.client", "llm.cache", "llm.answers"} <= set(result["modules"])
    assert not set(result["loaded"]) & {"django", "intruder", "guard", "anonymize", "attacks"}
    assert not {"torch", "transformers"} & set(result["loaded"])


def test_the_shared_retrying_transport_imports_neither_library_nor_a_client():
    """The LLM client and Prolific's share it; it imports neither of them (issue 50)."""
    result = _run_without_django(
        "import json, sys, http_retrying;"
        "print(json.dumps({'loaded': sorted({m.split('.')[0] for m in sys.modules})}))"
    )
    assert "http_retrying" in result["loaded"]
    assert not set(result["loaded"]) & {
        "django",
        "intruder",
        "guard",
        "anonymize",
        "attacks",
        "llm",
    }


def test_the_prolific_client_takes_the_shared_transport_not_the_llm_package():
    """Prolific's client took its transport from `llm` once; now from the shared package."""
    import ast

    tree = ast.parse((REPO / "intruder" / "prolific" / "client.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "http_retrying" in imported
    assert not {name for name in imported if name and name.split(".")[0] == "llm"}


def test_the_shared_model_runtime_imports_neither_library():
    result = _loaded_after_importing("model_runtime")
    assert {"model_runtime.precision", "model_runtime.base_model"} <= set(result["modules"])
    assert not set(result["loaded"]) & {"django", "intruder", "guard", "anonymize", "attacks"}


def test_the_shared_research_data_and_json_lines_modules_import_neither_library():
    result = _loaded_after_importing("research_data")
    assert "research_data.json_lines" in result["modules"]
    assert not set(result["loaded"]) & {"django", "intruder", "guard", "anonymize", "attacks"}


LAZY_TORCH = """
import json, sys
import attacks
from attacks.cli import build_parser
from attacks.registry import ATTACKS, attacks_where

build_parser()  # what `python -m attacks --help` builds
cheap = [ATTACKS[name].name for name in ("tfidf", "bm25")]
facts = {fact: attacks_where(fact) for fact in ("cheap", "reusable", "sends_texts_out")}
print(json.dumps({"cheap": cheap, "facts": facts, "torch": "torch" in sys.modules,
                  "transformers": "transformers" in sys.modules}))
"""


def test_import_attacks_and_its_cli_do_not_load_torch():
    """`import attacks`, the CLI's parser and every attack's class stay light (no torch).

    The facts the platform reads from the attack classes (TRIA's included) cost no torch.
    """
    result = _run_without_django(LAZY_TORCH)
    assert result == {
        "cheap": ["tfidf", "bm25"],
        "facts": {
            "cheap": ["tfidf", "bm25", "dense"],
            "reusable": ["tfidf", "bm25", "dense"],
            "sends_texts_out": ["llm"],
        },
        "torch": False,
        "transformers": False,
    }

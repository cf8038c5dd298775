"""Check our TAB metrics against TAB's own `evaluation.py` on the same gold and system files.

TAB's script is not part of this repository: pass the path of its `evaluation.py` (from a
checkout of NorskRegnesentral/text-anonymization-benchmark) with --tab-evaluation or
$TAB_EVALUATION_PY. It runs in a temporary directory in a child process, with spaCy's small
English pipeline in place of en_core_web_md (TAB's `GoldCorpus` takes the model name), the
same tagger our scorer uses. It needs `intervaltree` (dev dependency).

    python benchmarks/tab_crosscheck.py GOLD.json SYSTEM.json --tab-evaluation PATH
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from anonymize.annotations.formats import read_system_output, read_tab
from anonymize.annotations.tab_metrics import SPACY_MODEL, TabScorer, system_from_pairs

COMPARED = (
    "token_recall",
    "mention_recall",
    "recall_all_entities",
    "recall_direct_entities",
    "recall_quasi_entities",
    "token_precision",
    "mention_precision",
)
# TAB's evaluate() rounds to 3 decimals.
ROUNDING = 3

RUNNER = """
import json, sys
import evaluation
corpus = evaluation.GoldCorpus(sys.argv[1], spacy_model=sys.argv[3])
masked = evaluation.get_masked_docs_from_file(sys.argv[2])
print("@@@" + json.dumps(evaluation.evaluate(corpus, masked)))
"""


def tab_measures(evaluation_py: Path, gold: Path, system: Path) -> dict:
    """Run TAB's evaluate() on the files and return its measures dict."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(evaluation_py, Path(tmp) / "evaluation.py")
        (Path(tmp) / "runner.py").write_text(RUNNER)
        output = subprocess.run(
            [sys.executable, "runner.py", str(gold.resolve()), str(system.resolve()), SPACY_MODEL],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return json.loads(output.split("@@@", 1)[1])


def our_measures(gold: Path, system: Path) -> dict:
    """Return our scorer's measures on the same files."""
    documents = read_tab(gold.read_bytes())
    texts = {d.doc_id: d.text for d in documents}
    spans = read_system_output(system.read_bytes(), texts)
    return TabScorer(documents).evaluate(system_from_pairs(spans))


def compare(evaluation_py: Path, gold: Path, system: Path) -> dict:
    """Return both sets of numbers and whether they agree to TAB's rounding."""
    theirs = tab_measures(evaluation_py, gold, system)
    ours = our_measures(gold, system)
    rows = {name: {"tab": theirs[name], "ours": round(ours[name], ROUNDING)} for name in COMPARED}
    by_type = {
        entity_type: {"tab": value, "ours": round(ours["token_recall_by_type"][entity_type], 3)}
        for entity_type, value in theirs["token_recall_by_type"].items()
    }
    same = all(r["tab"] == r["ours"] for r in [*rows.values(), *by_type.values()])
    return {"identical": same, "measures": rows, "token_recall_by_type": by_type}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gold", type=Path)
    parser.add_argument("system", type=Path)
    parser.add_argument("--tab-evaluation", type=Path, default=os.environ.get("TAB_EVALUATION_PY"))
    parser.add_argument("--out", type=Path, default=None, help="write the comparison JSON here")
    args = parser.parse_args()
    if args.tab_evaluation is None:
        parser.error("pass --tab-evaluation PATH/evaluation.py (or set TAB_EVALUATION_PY)")
    result = compare(args.tab_evaluation, args.gold, args.system)
    from did_work import require_work

    require_work("tab_crosscheck", measures=len(result["measures"]))
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if result["identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env bash
# Create .venv and install the project with everything it needs (idempotent).
# Usage: scripts/setup.sh [--dev]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
say() { echo "  setup: $*"; }
# pip's own lines for what it downloads and installs; nothing when everything is there.
# Line-buffered: through a pipe grep and sed would hold every line until pip ends, minutes
# of silence on a first start.
pip_install() {
    python -m pip install --progress-bar off "$@" 2>&1 \
        | grep --line-buffered -E "^(Collecting|Downloading|Installing collected|Successfully installed|ERROR)" \
        | sed -u -e 's/^/    /' || true
}
[ -x .venv/bin/python ] || { say "creating .venv"; "$PY" -m venv .venv; }
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
# torch first, pinned: the CPU wheel on disk; a looser pin pulls a multi-GB CUDA build.
say "torch==2.13.0 (CPU wheel)"
pip_install "torch==2.13.0"
EXTRAS=""
if [ "${1:-}" = "--dev" ]; then
    # The RQ extra too: the tests run jobs through real RQ workers on a real Redis.
    EXTRAS="[dev,rq]"
fi
say "the project${EXTRAS:+ with its dev and rq extras} and its dependencies (pyproject.toml)"
# uv (from PyPI) resolves to the same versions as pip and installs them in parallel: 20 s
# against pip's 75 s for the rest of the project (benchmarks/RESULTS.md, "Test suite"). It
# sees the torch installed above and keeps it. pip remains the fallback.
uv_install() {
    python -m pip install -q "uv>=0.9,<1" >/dev/null 2>&1 && [ -x .venv/bin/uv ] || return 1
    # Its summary and errors; not the line per package.
    .venv/bin/uv pip install --python .venv/bin/python --compile-bytecode "$@" 2>&1 \
        | { grep --line-buffered -v -E "^ [-+~] " || true; } | sed -u -e 's/^/    /'
}
uv_install -e ".$EXTRAS" || { say "uv failed: installing with pip"; pip_install -e ".$EXTRAS"; }
say "checking that torch, transformers and django import"
python -c "import torch, transformers, django" || { echo "setup: install failed" >&2; exit 1; }
# Test tools from npm (package.json: axe-core for the browser tests' accessibility audit).
# Installed from the lock file; nothing from node_modules is served by the site.
if [ "${1:-}" = "--dev" ]; then
    if command -v npm >/dev/null 2>&1; then
        # Already installed at the locked version: nothing to fetch (works offline).
        node -e "const l = require('./package-lock.json').packages['node_modules/axe-core'];
                 process.exit(require('./node_modules/axe-core/package.json').version === l.version ? 0 : 1)" \
            2>/dev/null \
            || npm ci --no-audit --no-fund --loglevel=error >/dev/null \
            || { echo "setup: npm ci failed" >&2; exit 1; }
    else
        echo "setup: npm not found; the accessibility audit needs it (apt-get install npm)" >&2
    fi
fi

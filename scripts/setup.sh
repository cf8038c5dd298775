#!/usr/bin/env bash
# Create .venv and install the project with everything it needs (idempotent).
# Usage: scripts/setup.sh [--dev]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
# torch first, pinned: the CPU wheel on disk; a looser pin pulls a multi-GB CUDA build.
python -m pip install -q "torch==2.13.0" 2>&1 | grep -v "is ignored" || true
if [ "${1:-}" = "--dev" ]; then
    python -m pip install -q -e ".[dev]" 2>&1 | grep -v "is ignored" || true
else
    python -m pip install -q -e . 2>&1 | grep -v "is ignored" || true
fi
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

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
EXTRAS=""
if [ "${1:-}" = "--dev" ]; then
    # The RQ extra too: the tests run jobs through real RQ workers on a real Redis.
    EXTRAS="[dev,rq]"
fi
# torch is pinned (pyproject.toml): the CPU wheel wherever pip is configured to find one (a
# local --find-links folder here); a looser pin pulls a multi-GB CUDA build.
say "torch==2.13.0 (CPU wheel) and the project${EXTRAS:+ with its dev and rq extras} (pyproject.toml)"
# uv (from PyPI) resolves to the same versions as pip and installs them in parallel: on a
# fresh clone 5 s for torch against pip's 20, and 20 s against pip's 75 for the rest
# (benchmarks/RESULTS.md, "Test suite"). It reads no pip configuration, so pip's find-links
# are handed on. pip remains the fallback.
pip_find_links() {
    local links=${PIP_FIND_LINKS:-$(python -m pip config get global.find-links 2>/dev/null || true)}
    for link in $links; do printf -- '--find-links\n%s\n' "$link"; done
}
# Every installed file compiled to bytecode up front (20,116 files, 33 s on 2 cores), so
# that no later start compiles, even where PYTHONDONTWRITEBYTECODE forbids caching.
# SETUP_BYTECODE=lazy leaves it to Python's import, which caches what is imported (about
# 3,700 files, 11 s): scripts/test.sh does, as its processes may cache.
COMPILE=(--compile-bytecode)
[ "${SETUP_BYTECODE:-all}" != lazy ] || COMPILE=()
uv_install() {
    python -m pip install -q "uv>=0.9,<1" >/dev/null 2>&1 && [ -x .venv/bin/uv ] || return 1
    local links=()
    mapfile -t links < <(pip_find_links)
    # Its summary and errors; not the line per package.
    .venv/bin/uv pip install --python .venv/bin/python "${COMPILE[@]}" "${links[@]}" "$@" 2>&1 \
        | { grep --line-buffered -v -E "^ [-+~] " || true; } | sed -u -e 's/^/    /'
}
# uv prints nothing while it compiles: say so first, so a cold start's quiet minutes read as work.
[ ${#COMPILE[@]} -eq 0 ] || say "installing, then compiling every installed file to bytecode" \
    "(cold start: up to 2 minutes without output; when already installed: seconds)"
uv_install "torch==2.13.0" -e ".$EXTRAS" || {
    say "uv failed: installing with pip"
    pip_install "torch==2.13.0"
    pip_install -e ".$EXTRAS"
}
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

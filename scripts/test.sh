#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite.
# Usage: scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --dev
. .venv/bin/activate
ruff check .
python -m pytest "$@"

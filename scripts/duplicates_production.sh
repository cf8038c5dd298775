#!/usr/bin/env bash
# Run the `duplicates` tool over production code only: the tracked files (and untracked ones
# git does not ignore) outside tests/ and benchmarks/, copied to a scratch folder.
#   scripts/duplicates_production.sh            production code, migrations included
#   scripts/duplicates_production.sh --no-migrations
# The triage of what it lists is docs/decisions/duplicates.md.
set -euo pipefail
exclude='^(tests|benchmarks)/'
if [ "${1:-}" = "--no-migrations" ]; then
    exclude='^(tests|benchmarks)/|/migrations/'
fi
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$repo"
{ git ls-files; git ls-files --others --exclude-standard; } | grep -Ev "$exclude" |
    while read -r file; do
        if [ -f "$file" ]; then
            mkdir -p "$scratch/$(dirname "$file")"
            cp "$file" "$scratch/$file"
        fi
    done
cd "$scratch"
duplicates --most 200 --seconds 300

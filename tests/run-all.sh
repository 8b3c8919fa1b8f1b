#!/usr/bin/env bash
# Installs everything the test suite needs and runs all of it: lint and types, Python unit
# tests, end-to-end language-server tests, pre-commit hook tests, the VS Code extension's
# build and tests, and the real-editor tests (headless Neovim, VS Code via code-server).
# This is the README's test command; .ci/run calls it unchanged.
#
# Under CI=true every stage must run: a missing editor is a failure, never a skip.
# Each stage says when it starts and how long it took; a summary of all stages comes last.
set -euo pipefail
cd "$(dirname "$0")/.."
export CRYSTAL_REPO="$PWD"
timings=()
summary() {
    printf '\n==> stage times\n'
    for line in "${timings[@]}"; do printf '    %s\n' "$line"; done
}
trap summary EXIT
for stage in tests/ci/[0-9][0-9]-*.sh; do
    printf '\n==> %s (started %s)\n' "$stage" "$(date +%H:%M:%S)"
    t0=$(date +%s)
    status=0
    bash "$stage" || status=$?
    timings+=("$(printf '%-28s %4d s%s' "$stage" "$(( $(date +%s) - t0 ))" "$([ "$status" = 0 ] || echo "  FAILED (exit $status)")")")
    [ "$status" = 0 ] || exit "$status"
done
printf '\n==> all test stages passed\n'

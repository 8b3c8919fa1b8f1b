#!/usr/bin/env bash
# Installs everything the test suite needs and runs all of it: lint and types, Python unit
# tests, end-to-end language-server tests, pre-commit hook tests, the VS Code extension's
# build and tests, and the real-editor tests (headless Neovim, VS Code via code-server).
# This is the README's test command; .ci/run calls it unchanged.
#
# Under CI=true every stage must run: a missing editor is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
export CRYSTAL_REPO="$PWD"
for stage in tests/ci/[0-9][0-9]-*.sh; do
    printf '\n==> %s\n' "$stage"
    bash "$stage"
done
printf '\n==> all test stages passed\n'

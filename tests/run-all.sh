#!/usr/bin/env bash
# Installs everything the test suite needs and runs all of it.
# This is the README's test command; .ci/run calls it unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${CRYSTAL_TEST_VENV:-.venv}

step() { printf '\n==> %s\n' "$*"; }

step "Python environment ($VENV)"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e '.[test]'

step "lint and types"
"$VENV/bin/ruff" check crystal_lsp hooks tests bench
"$VENV/bin/ruff" format --check crystal_lsp hooks tests bench
"$VENV/bin/mypy"

step "Python tests"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests

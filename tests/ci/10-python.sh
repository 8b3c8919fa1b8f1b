#!/usr/bin/env bash
# Python environment, lint, types and the whole pytest suite (unit, e2e, hooks, real clients).
set -euo pipefail
cd "${CRYSTAL_REPO:-$(dirname "$0")/../..}"
PYTHON=${PYTHON:-python3}
VENV=${CRYSTAL_TEST_VENV:-.venv}
bash tests/ci/system-packages.sh
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e '.[test]'
"$VENV/bin/ruff" check crystal_lsp hooks tests bench
"$VENV/bin/ruff" format --check crystal_lsp hooks tests bench
"$VENV/bin/mypy"
"$VENV/bin/mypy" hooks
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests

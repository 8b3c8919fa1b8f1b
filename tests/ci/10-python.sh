#!/usr/bin/env bash
# Python environment, lint, types and the whole pytest suite (unit, e2e, hooks, real clients),
# in parallel on every core.
set -euo pipefail
cd "${CRYSTAL_REPO:-$(dirname "$0")/../..}"
PYTHON=${PYTHON:-python3}
VENV=${CRYSTAL_TEST_VENV:-.venv}
bash tests/ci/system-packages.sh
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e '.[test]'
# CodeBLEU (the codebleu extra) for its tests: codebleu 0.7.0 declares tree-sitter<0.23, which the
# test extra's tree-sitter>=0.23 (RUBY) excludes, so pip's resolver cannot take both; the package
# runs on tree-sitter 0.23+ and the grammars the test extra installs (tests/unit/metric/test_codebleu.py)
"$VENV/bin/python" -m pip install -q --no-deps 'codebleu==0.7.0'
# the editable install builds the optional native core in place: it must be there in CI
"$VENV/bin/python" -c 'import crystal_lsp.metric._native, crystal_lsp; assert crystal_lsp.native_available()'
"$VENV/bin/ruff" check crystal_lsp hooks tests bench
"$VENV/bin/ruff" format --check crystal_lsp hooks tests bench
"$VENV/bin/mypy"
"$VENV/bin/mypy" hooks
# on every core (pytest-xdist; idle workers take tests from busy ones; CRYSTAL_TEST_WORKERS=0: one process)
workers=${CRYSTAL_TEST_WORKERS:-auto}
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -n "$workers" --dist worksteal tests
# and the unit suite once more on the pure-Python fallback alone
CRYSTAL_LSP_PURE=1 "$VENV/bin/python" -m pytest -q -p no:cacheprovider -n "$workers" --dist worksteal tests/unit

#!/usr/bin/env bash
# Builds the crystal-lsp wheel from this repository into bundled/, where the extension finds it
# and offers to install it into the user's Python (its dependencies come from the package index).
# Usage: scripts/build-wheel.sh [PYTHON]   (default: the repository's .venv, else python3)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
python="${1:-}"
if [ -z "$python" ]; then
    if [ -x "$repo/.venv/bin/python" ]; then python="$repo/.venv/bin/python"; else python=python3; fi
fi
rm -f "$here"/bundled/crystal_lsp-*.whl
log=$(mktemp)
# The bundled wheel is pure Python (py3-none-any), installable anywhere: no native core.
if ! CRYSTAL_LSP_BUILD_NATIVE=0 "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$here/bundled" "$repo" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"
ls "$here"/bundled/crystal_lsp-*.whl

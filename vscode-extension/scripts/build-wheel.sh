#!/usr/bin/env bash
# Builds the crystal-lsp wheel of a crystal-lsp source tree into bundled/, where the extension
# finds it and offers to install it into the user's Python (dependencies come from the index).
# Usage: scripts/build-wheel.sh [PYTHON] [--repo DIR]
#   --repo DIR   the crystal-lsp source tree (default: $CRYSTAL_REPO, else this extension's parent
#                directory when it holds pyproject.toml)
#   PYTHON       default: DIR/.venv/bin/python, else python3
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="${CRYSTAL_REPO:-}"
python=""
while [ $# -gt 0 ]; do
    case "$1" in
        --repo) repo="${2:?--repo needs a directory}"; shift 2 ;;
        --repo=*) repo="${1#--repo=}"; shift ;;
        -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
        *) python="$1"; shift ;;
    esac
done
if [ -z "$repo" ] && [ -f "$here/../pyproject.toml" ]; then
    repo="$here/.."
fi
if [ -z "$repo" ] || [ ! -f "$repo/pyproject.toml" ]; then
    echo "build-wheel.sh: no crystal-lsp source tree${repo:+ at $repo} (no pyproject.toml); pass --repo DIR" >&2
    exit 2
fi
repo="$(cd "$repo" && pwd)"
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

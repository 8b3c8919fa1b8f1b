#!/usr/bin/env bash
# The VS Code extension: clean install from the lockfile, type-check, unit tests of its own logic
# (node:test, no VS Code needed), the crystal-lsp wheel it ships, esbuild bundle, .vsix package.
# Output: vscode-extension/crystal-lsp.vsix (installed by 30-vscode-e2e.sh).
set -euo pipefail
cd "${CRYSTAL_REPO:-$(dirname "$0")/../..}"
repo="$PWD"
ext="$repo/vscode-extension"
PYTHON=${PYTHON:-python3}
VENV=${CRYSTAL_TEST_VENV:-.venv}

if ! command -v npm >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then
        echo "npm is not installed: the extension cannot be built (Node 20 and npm are required)" >&2
        exit 1
    fi
    echo "skip: npm is not installed; the VS Code extension is not built or tested" >&2
    exit 0
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
    echo "Node $(node --version) is too old: the extension's tools need Node 20 or newer" >&2
    exit 1
fi

# The wheel is built with the test venv's Python when there is one (10-python.sh creates it).
py="$PYTHON"
[ -x "$VENV/bin/python" ] && py="$(cd "$(dirname "$VENV/bin/python")" && pwd)/python"

cd "$ext"
t0=$(date +%s)
npm ci --no-audit --no-fund --loglevel=error
npm run --silent typecheck
npm test
bash scripts/build-wheel.sh "$py" --repo "$repo"
rm -f crystal-lsp.vsix
npm run package
unzip -l crystal-lsp.vsix
# The .vsix must hold the bundle and the wheel, and nothing from src/ or node_modules/.
listing=$(unzip -Z1 crystal-lsp.vsix)
for want in extension/dist/extension.js extension/package.json extension/readme.md; do
    grep -qx "$want" <<<"$listing" || { echo "missing from the .vsix: $want" >&2; exit 1; }
done
grep -q '^extension/bundled/crystal_lsp-.*\.whl$' <<<"$listing" || { echo "the .vsix has no bundled crystal_lsp wheel" >&2; exit 1; }
if grep -E '^extension/(src|node_modules|test|e2e|out)/' <<<"$listing"; then
    echo "the .vsix contains development files (see .vscodeignore)" >&2
    exit 1
fi
echo "extension built and tested in $(( $(date +%s) - t0 )) s: $ext/crystal-lsp.vsix"

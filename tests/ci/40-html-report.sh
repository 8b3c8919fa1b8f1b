#!/usr/bin/env bash
# The HTML report in a real browser: `crystal-lsp scan --demo --format html` rendered by Debian's
# Chromium through playwright-core (the version the VS Code end-to-end harness pins), checked by
# tests/browser/html-report.js: it renders, every finding's code is on the page, nothing is
# fetched. Screenshots: tests/artifacts/html-report/. With CRYSTAL_UPDATE_SCREENSHOT=1 (or when
# it is missing) the curated one is copied to docs/images/html-report.png.
#
# Under CI=true a missing Chromium or Node is a failure; elsewhere it is a skip.
set -euo pipefail
cd "${CRYSTAL_REPO:-$(dirname "$0")/../..}"
repo="$PWD"
harness="$repo/tests/browser"
artifacts="$repo/tests/artifacts/html-report"
VENV=${CRYSTAL_TEST_VENV:-.venv}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

skip_or_fail() {
    if [ "${CI:-}" = true ]; then
        echo "FAIL: $*" >&2
        exit 1
    fi
    echo "skip: $* (the HTML report's browser test did not run)" >&2
    exit 0
}

if [ ! -x "$CHROMIUM" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing chromium"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
    else
        skip_or_fail "no Chromium at $CHROMIUM (need root and apt-get to install it)"
    fi
fi
command -v node >/dev/null 2>&1 || skip_or_fail "node is not installed"
[ -x "$VENV/bin/crystal-lsp" ] || skip_or_fail "no project venv at $VENV (tests/ci/10-python.sh makes it)"

# the same playwright-core as the VS Code harness: one pin, checked here
pin() { node -p "require('$1').dependencies['playwright-core']"; }
[ "$(pin "$harness/package.json")" = "$(pin "$repo/vscode-extension/e2e/package.json")" ] ||
    { echo "tests/browser and vscode-extension/e2e pin different playwright-core versions" >&2; exit 1; }

# playwright-core alone (no browser download, no install scripts), once per lockfile and Node
key=$(cat "$harness/package.json" "$harness/package-lock.json" <(node -p 'process.version + process.arch') |
    sha256sum | cut -c1-16)
tools=${XDG_CACHE_HOME:-$HOME/.cache}/crystal-lsp/html-report-browser/$key
if [ ! -f "$tools/.complete" ]; then
    rm -rf "$tools"
    mkdir -p "$tools"
    cp "$harness/package.json" "$harness/package-lock.json" "$tools/"
    (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts)
    touch "$tools/.complete"
fi

run=$(mktemp -d "${TMPDIR:-/tmp}/crystal-html-report.XXXXXX")
trap 'rm -rf "$run"' EXIT
scan() {
    local status=0
    CRYSTAL_LSP_CACHE_DIR="$run/cache" "$VENV/bin/crystal-lsp" scan --demo --no-progress "$@" || status=$?
    [ "$status" = 1 ] || { echo "crystal-lsp scan --demo $* exited $status, expected 1 (findings)" >&2; exit 1; }
}
scan --format json -o "$run/demo.json"
scan --format html -o "$run/demo.html"
rm -rf "$artifacts"
mkdir -p "$artifacts"
cp "$run/demo.html" "$artifacts/demo.html"

# a report of 10,000 findings (the demo's first copy, repeated), rendered as the scan renders it
shown=$("$VENV/bin/python" - "$run/demo.json" "$run/large.html" <<'PY'
import json, sys
from crystal_lsp.clones.reports.htmlcode import SourceFiles
from crystal_lsp.clones.reports.htmlreport import MAX_FINDINGS, line_counts, render
doc = json.load(open(sys.argv[1], encoding="utf-8"))
copy = next(f for f in doc["findings"] if f.get("level", "copy") == "copy")
doc["findings"] = [copy] * 10_000
lines = line_counts(doc["root"], [loc["path"] for loc in copy["locations"]], 2_000_000)
html = render(doc, SourceFiles(doc["root"]), lines, lambda p, n: f"{p}#L{n}")
open(sys.argv[2], "w", encoding="utf-8").write(html)
print(min(MAX_FINDINGS, 10_000))
PY
)

REPORT="$run/demo.html" JSON="$run/demo.json" SHOTS="$artifacts" CHROMIUM="$CHROMIUM" \
    LARGE="$run/large.html" LARGE_SHOWN="$shown" \
    NODE_PATH="$tools/node_modules" node "$harness/html-report.js"

if [ "${CRYSTAL_UPDATE_SCREENSHOT:-0}" = 1 ] || [ ! -f "$repo/docs/images/html-report.png" ]; then
    mkdir -p "$repo/docs/images"
    cp "$artifacts/html-report.png" "$repo/docs/images/html-report.png"
    echo "updated docs/images/html-report.png"
fi

#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code: code-server 4.100.3 (VS Code
# 1.100.3, the last release for Node 20) with the built .vsix installed, driven by Debian's
# Chromium through playwright-core (vscode-extension/e2e/drive.js). The language server is the
# real one: `python -m crystal_lsp serve` from the project venv, then, for the first-run check,
# from a fresh venv into which the extension installs its bundled wheel at a click.
# Screenshots and dumps: tests/artifacts/vscode/. With CRYSTAL_UPDATE_SCREENSHOT=1 (or when it is
# missing) the curated screenshot is copied to vscode-extension/images/screenshot.png.
#
# Under CI=true a missing Chromium, Node or code-server is a failure; elsewhere it is a skip.
set -euo pipefail
cd "${CRYSTAL_REPO:-$(dirname "$0")/../..}"
repo="$PWD"
ext="$repo/vscode-extension"
harness="$ext/e2e"
artifacts="$repo/tests/artifacts/vscode"
VENV=${CRYSTAL_TEST_VENV:-.venv}
PYTHON=${PYTHON:-python3}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
CODE_SERVER_VERSION=4.100.3

skip_or_fail() {
    if [ "${CI:-}" = true ]; then
        echo "FAIL: $*" >&2
        exit 1
    fi
    echo "skip: $* (the VS Code end-to-end test did not run)" >&2
    exit 0
}

# --- system packages: Chromium, ripgrep (seeds code-server's rg download), krb5 headers ------
need=()
[ -x "$CHROMIUM" ] || need+=(chromium)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
[ -e /usr/include/gssapi/gssapi.h ] || need+=(libkrb5-dev)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing ${need[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    else
        skip_or_fail "missing system packages: ${need[*]} (need root and apt-get to install them)"
    fi
fi
command -v node >/dev/null 2>&1 || skip_or_fail "node is not installed"
[ "$(node -p 'process.versions.node.split(".")[0]')" = 20 ] ||
    skip_or_fail "code-server $CODE_SERVER_VERSION needs Node 20, this is $(node --version)"
[ -x "$VENV/bin/python" ] || skip_or_fail "no project venv at $VENV (tests/ci/10-python.sh makes it)"
python_abs="$(cd "$(dirname "$VENV/bin/python")" && pwd)/python"
# CRYSTAL_E2E_INTERPRETER (a JSON array) points the extension at another server command line.
interpreter_json=${CRYSTAL_E2E_INTERPRETER:-"[\"$python_abs\"]"}
if [ -z "${CRYSTAL_E2E_INTERPRETER:-}" ]; then
    "$python_abs" -c 'import crystal_lsp.server' ||
        skip_or_fail "the project venv cannot import crystal_lsp.server"
fi

# --- the .vsix (built by 20-extension.sh; built here when this stage runs alone) -------------
vsix="$ext/crystal-lsp.vsix"
[ -f "$vsix" ] || bash tests/ci/20-extension.sh
[ -f "$vsix" ] || skip_or_fail "no $vsix"

# --- the harness: code-server + playwright-core from the lockfile ---------------------------
# code-server's install compiles native modules (~3 min) and would download ripgrep from GitHub;
# the recipe's workarounds: unsafe-perm (we are root), yes (npx fetches node-gyp), a seeded
# ripgrep cache, and the system Node headers. It is installed once per lockfile, Node version
# and architecture into the user cache (not the work tree) and reused by later runs.
t_install=$(date +%s)
key=$(cat "$harness/package.json" "$harness/package-lock.json" <(node -p 'process.version + process.arch') |
    sha256sum | cut -c1-16)
tools_root=${CRYSTAL_E2E_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/crystal-lsp/vscode-e2e}
tools="$tools_root/$key"
if [ ! -f "$tools/.complete" ]; then
    rm -rf "$tools"
    find "$tools_root" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended -regex '.*/[0-9a-f]{16}' \
        -exec rm -rf {} + 2>/dev/null || true # harnesses of older lockfiles
    mkdir -p "$tools"
    cp "$harness/package.json" "$harness/package-lock.json" "$tools/"
    rgcache=$(mktemp -d)
    mkdir -p "$rgcache/vscode-ripgrep-cache-1.15.11"
    tar czf "$rgcache/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
    # npm 11 occasionally runs an install script before a dependency of it is extracted
    # ("Cannot find module 'abbrev'" in argon2's node-pre-gyp): retry a clean install.
    for attempt in 1 2 3; do
        if (cd "$tools" && TMPDIR="$rgcache" npm_config_nodedir=/usr npm_config_unsafe_perm=true npm_config_yes=true \
            npm ci --no-audit --no-fund --loglevel=error --foreground-scripts >"$rgcache/npm-ci.log" 2>&1); then
            break
        fi
        grep -v '^npm warn' "$rgcache/npm-ci.log" | tail -25 >&2
        [ "$attempt" = 3 ] && { echo "npm ci of the e2e harness failed 3 times" >&2; exit 1; }
        echo "npm ci of the e2e harness failed (attempt $attempt); retrying" >&2
    done
    rm -rf "$rgcache"
    touch "$tools/.complete"
fi
cs="$tools/node_modules/.bin/code-server"
[ -x "$cs" ] || skip_or_fail "code-server was not installed"

# --- a fresh code-server profile (XDG dirs too: code-server writes a config on first run) ----
run=$(mktemp -d "${TMPDIR:-/tmp}/crystal-vscode-e2e.XXXXXX")
export XDG_CONFIG_HOME="$run/xdg/config" XDG_DATA_HOME="$run/xdg/data" XDG_CACHE_HOME="$run/xdg/cache"
cs_version=$("$cs" --version 2>/dev/null | grep -Eo '^[0-9]+\.[0-9]+\.[0-9]+ ' | head -1 | tr -d ' ' || true)
[ "$cs_version" = "$CODE_SERVER_VERSION" ] ||
    { echo "expected code-server $CODE_SERVER_VERSION, got: $("$cs" --version 2>&1 | tail -1)" >&2; exit 1; }
echo "harness ready (code-server $cs_version) in $(( $(date +%s) - t_install )) s"
export CRYSTAL_LSP_E2E_DUMP="$run/dump"
mkdir -p "$run/data/User" "$run/ext" "$run/shots" "$CRYSTAL_LSP_E2E_DUMP"
cp -r "$harness/fixture" "$run/ws"
find "$run/ws" -name '*.py.txt' -exec sh -c 'mv "$1" "${1%.txt}"' _ {} \;
# a hostile repository's file name (issue 33): a command link, an image and HTML in the hover
cp "$run/ws/ledger/ledger.py" "$run/ws/ledger/[click](command:crystal.compare?%5B%7B%22left%22%3A1%7D%5D) ![x](https:e.test) <img src=x>.py"
cat >"$run/data/User/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "workbench.enableExperiments": false,
  "extensions.ignoreRecommendations": true,
  "workbench.tips.enabled": false,
  "git.enabled": false,
  "remote.autoForwardPorts": false,
  "window.commandCenter": false,
  "chat.commandCenter.enabled": false,
  "workbench.colorTheme": "Default Dark Modern",
  "editor.minimap.enabled": false,
  "crystalLsp.interpreter": $interpreter_json
}
JSON

# A Python without the server, for the first-run (one-click install) check.
fresh=""
if [ "${CRYSTAL_E2E_INSTALL:-1}" = 1 ]; then
    if "$PYTHON" -m venv "$run/fresh-venv" >/dev/null 2>&1; then
        fresh="$run/fresh-venv/bin/python"
    else
        skip_or_fail "cannot create a venv with $PYTHON for the first-run check (python3-venv missing?)"
    fi
fi

cleanup() {
    if [ -n "${cs_pid:-}" ]; then
        kill -TERM -- "-$cs_pid" 2>/dev/null || kill -TERM "$cs_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$cs_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- "-$cs_pid" 2>/dev/null || true
    fi
    mkdir -p "$artifacts"
    cp "$run"/shots/* "$artifacts"/ 2>/dev/null || true
    cp "$run"/dump/*.json "$run"/dump/*.jsonl "$artifacts"/ 2>/dev/null || true
    cp "$run"/cs.log "$artifacts"/code-server.log 2>/dev/null || true
    find "$run/data/logs" -name '*Crystal LSP*.log' -exec cp {} "$artifacts/extension-output.log" \; 2>/dev/null || true
    if [ "${CRYSTAL_E2E_KEEP:-0}" != 1 ]; then rm -rf "$run"; else echo "kept $run"; fi
}
trap cleanup EXIT
rm -rf "$artifacts"

t_run=$(date +%s)
"$cs" --user-data-dir "$run/data" --extensions-dir "$run/ext" --install-extension "$vsix" >"$run/install.log" 2>&1 ||
    { cat "$run/install.log" >&2; exit 1; }
port=$("$python_abs" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
setsid "$cs" --user-data-dir "$run/data" --extensions-dir "$run/ext" --bind-addr "127.0.0.1:$port" --auth none \
    --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    --ignore-last-opened >"$run/cs.log" 2>&1 &
cs_pid=$!
for _ in $(seq 300); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break
    kill -0 "$cs_pid" 2>/dev/null || { cat "$run/cs.log" >&2; exit 1; }
    sleep 0.2
done
curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" || { echo "code-server did not come up" >&2; cat "$run/cs.log" >&2; exit 1; }

set +e
CS_URL="http://127.0.0.1:$port/?folder=$run/ws" SHOTS="$run/shots" DUMP="$CRYSTAL_LSP_E2E_DUMP" \
    WS="$run/ws" CHROMIUM="$CHROMIUM" FRESH_PYTHON="$fresh" \
    NODE_PATH="$tools/node_modules" node "$harness/drive.js"
status=$?
set -e
echo "browser drive: $(( $(date +%s) - t_run )) s, exit $status"

if [ "$status" = 0 ] && [ -f "$run/shots/screenshot.png" ]; then
    if [ "${CRYSTAL_UPDATE_SCREENSHOT:-0}" = 1 ] || [ ! -f "$ext/images/screenshot.png" ]; then
        mkdir -p "$ext/images"
        cp "$run/shots/screenshot.png" "$ext/images/screenshot.png"
        echo "updated vscode-extension/images/screenshot.png"
    fi
fi
exit "$status"

#!/usr/bin/env bash
# Debian packages the real-editor tests need (headless Neovim; Chromium and friends for
# code-server). Installed only when missing and only when we can (root, apt available).
set -euo pipefail
need=()
command -v nvim >/dev/null 2>&1 || need+=(neovim)
command -v git >/dev/null 2>&1 || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
    elif [ "${CI:-}" = true ]; then
        echo "missing system packages: ${need[*]} (cannot install them: not root or no apt)" >&2
        exit 1
    else
        echo "note: ${need[*]} not installed; the tests that need them will be skipped" >&2
    fi
fi

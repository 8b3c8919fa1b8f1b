#!/usr/bin/env bash
# Debian packages the tests need (headless Neovim; Chromium and friends for code-server; a C
# compiler and the Python headers for the native core). Installed only when missing and only
# when we can (root, apt available).
set -euo pipefail
need=()
command -v nvim >/dev/null 2>&1 || need+=(neovim)
command -v git >/dev/null 2>&1 || need+=(git)
# a C compiler and the Python headers build the native core (crystal_lsp/_native.c)
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
"${PYTHON:-python3}" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    2>/dev/null || need+=(python3-dev)
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

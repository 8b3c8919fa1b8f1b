"""Optional native core (``crystal_lsp.metric._native``); all other metadata lives in pyproject.toml.

The extension is optional: if it does not compile, the pure-Python package is installed and
used. ``CRYSTAL_LSP_BUILD_NATIVE=0`` skips it altogether (a ``py3-none-any`` wheel).
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup

BUILD_NATIVE = os.environ.get("CRYSTAL_LSP_BUILD_NATIVE", "1").strip().lower() not in (
    "0",
    "false",
    "no",
    "off",
)

NATIVE_SOURCES = (
    "_native",
    "_vocab",
    "_profile",
    "_bleu",
    "_cache",
    "_counter",
    "_fastlex",
    "_align",
)
"""The files of the native core, one per concern (crystal_lsp/metric/_native.h says which)."""

ext_modules = []
if BUILD_NATIVE:
    compile_args = [] if sys.platform == "win32" else ["-std=c99", "-O2"]
    ext_modules.append(
        Extension(
            "crystal_lsp.metric._native",
            sources=[f"crystal_lsp/metric/{name}.c" for name in NATIVE_SOURCES],
            depends=["crystal_lsp/metric/_native.h"],
            extra_compile_args=compile_args,
            optional=True,
        )
    )

setup(ext_modules=ext_modules)

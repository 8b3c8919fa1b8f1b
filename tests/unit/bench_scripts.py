"""Loading a benchmark script (``bench/`` is not a package) as a module, for the tests of it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def load(relative: str, name: str) -> ModuleType:
    """``bench/<relative>`` executed as module ``name`` (registered: dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

"""Fixtures of the unit suite: every test gets its own crystal-lsp cache directory; ``core``
runs a module's tests on both implementations of the metric core (native and pure Python)."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def crystal_cache_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> pathlib.Path:
    """``CRYSTAL_LSP_CACHE_DIR`` points at a fresh directory (never the user's cache)."""
    path = tmp_path_factory.mktemp("crystal-cache")
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(path))
    return path


def _cores() -> list[object]:
    """The implementations to run the core tests on: native (if built and not disabled), pure."""
    from crystal_lsp.metric import ngrams

    native = pytest.param(
        "native",
        marks=pytest.mark.skipif(
            not ngrams.native_available(),
            reason=f"native core not in use ({ngrams.native_status()})",
        ),
    )
    return [native, "pure"]


@pytest.fixture(scope="module", params=_cores())
def core(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a module's tests with the native core, then in pure Python (``usefixtures("core")``).

    Module-scoped, so that hypothesis's property tests can use it, and each switch starts with
    empty profile caches and a fresh vocabulary.
    """
    from crystal_lsp.metric import crystal, ngrams

    previous = ngrams.set_native(request.param == "native")
    crystal.clear_caches()
    yield request.param
    ngrams.set_native(previous)
    crystal.clear_caches()

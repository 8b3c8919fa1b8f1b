"""The findings of a pinned corpus of real code, exactly (tests/data/pinned/README.md).

Speed work on the clone finder (alignment, snapping, the native core, reuse) must not change
what it finds: the JSON findings -- ids, locations, scores, levels, evidence -- of a scan of
three.js's ``src/math`` and 18 modules of rich are compared with the pinned ones, with the native
core and without it (``CRYSTAL_LSP_PURE=1``). A rescan that reuses the first scan's alignment
(one file changed and changed back) finds them too.
"""

from __future__ import annotations

import json
import os
import pathlib
import tarfile
from typing import Any

import pytest

from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.scan import run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.metric.ngrams import native_available, set_native

PINNED = pathlib.Path(__file__).resolve().parents[2] / "data" / "pinned"
UPDATE = os.environ.get("CRYSTAL_LSP_UPDATE_PINNED") == "1"
CONFIG = ScanConfig(show_similar=True)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("pinned")
    with tarfile.open(PINNED / "corpus.tar.gz") as archive:
        archive.extractall(root, filter="data")
    return root


def findings(root: pathlib.Path, cache: pathlib.Path) -> list[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CRYSTAL_LSP_CACHE_DIR", str(cache))
        result = run_scan(str(root), list_files(str(root), CONFIG), CONFIG, use_cache=False)
    return [f.to_json() for f in result.findings]


def pinned() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((PINNED / "findings.json").read_text())
    return found


def test_the_findings_are_the_pinned_ones(corpus: pathlib.Path, tmp_path: pathlib.Path) -> None:
    found = findings(corpus, tmp_path / "cache")
    if UPDATE:
        (PINNED / "findings.json").write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    assert len(found) > 40  # copies and similar structure, families among them
    assert {f["level"] for f in found} == {"copy", "similar"}
    assert found == pinned()


def test_a_rescan_reusing_the_alignment_finds_them(
    corpus: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    cache = tmp_path / "cache"
    findings(corpus, cache)
    edited = corpus / "rich" / "segment.py"
    original = edited.read_text(encoding="utf-8")
    try:
        edited.write_text(original + "\n\ndef added(value):\n    return value + 1\n")
        findings(corpus, cache)
    finally:
        edited.write_text(original, encoding="utf-8")
    assert findings(corpus, cache) == pinned()


@pytest.mark.skipif(not native_available(), reason="the native core is not built")
def test_the_pure_python_path_finds_them(corpus: pathlib.Path, tmp_path: pathlib.Path) -> None:
    previous = set_native(False)
    try:
        found = findings(corpus, tmp_path / "cache")
    finally:
        set_native(previous)
    assert found == pinned()

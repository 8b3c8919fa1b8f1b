"""What starting up imports: the public facade and a scan answered from the cache load lazily.

A warm ``crystal-lsp scan`` (nothing changed since the last one) is mostly interpreter start and
imports; numpy, the lexers, the metric core, the clone finder and the other subcommands' modules
are loaded only by the paths that use them. Each check runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

from scan_samples import ORIGINAL, UNRELATED, module, renamed, write_tree

import crystal_lsp

NOT_FOR_A_CACHED_SCAN = (
    "numpy",
    "pygls",
    "lsprotocol",
    "tqdm",
    "pygments.lexers",
    "crystal_lsp.clones.finder",
    "crystal_lsp.clones.index",
    "crystal_lsp.cli.score",
    "crystal_lsp.cli.disting",
    "crystal_lsp.distributed.scan",
    "crystal_lsp.metric.ngrams",
    "crystal_lsp.text.fastlex",
)


def _loaded_after(code: str, cwd: pathlib.Path) -> list[str]:
    """Which modules of :data:`NOT_FOR_A_CACHED_SCAN` a fresh interpreter holds after ``code``."""
    probe = (
        f"import json, sys\n{code}\n"
        f"print(json.dumps(sorted(m for m in {NOT_FOR_A_CACHED_SCAN!r} if m in sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=cwd,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_the_facade_loads_the_api_on_first_use(tmp_path: pathlib.Path) -> None:
    assert _loaded_after("import crystal_lsp", tmp_path) == []
    assert set(crystal_lsp.__all__) <= set(dir(crystal_lsp))
    for name in crystal_lsp.__all__:
        assert getattr(crystal_lsp, name) is not None, name
    assert crystal_lsp.tokenize("x = f(1)", "python").texts == ["x", "=", "f", "(", "1", ")"]


def test_a_cached_scan_imports_neither_numpy_nor_the_lexers(tmp_path: pathlib.Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {"a.py": module(ORIGINAL), "b.py": module(UNRELATED[0], renamed())},
    )
    out = tmp_path / "report.json"
    scan = (
        "from crystal_lsp.cli.main import main\n"
        f"code = main(['scan', {str(root)!r}, '--format', 'json', '-o', {str(out)!r}])\n"
        "assert code == 1, code"
    )
    cold = _loaded_after(scan, tmp_path)
    assert "crystal_lsp.clones.finder" in cold  # the probe sees what a real scan loads
    assert json.loads(out.read_text())["summary"]["cached"] is False
    assert _loaded_after(scan, tmp_path) == []
    report = json.loads(out.read_text())
    assert report["summary"]["cached"] is True and report["findings"]

"""Chain outcomes worked out in forked workers are those of the search itself, in order.

On the pinned corpus of real code (tests/data/pinned), a scan whose chain outcomes come from
two forked workers finds exactly what a scan computing them in process finds.
"""

from __future__ import annotations

import multiprocessing
import pathlib
import tarfile
from typing import Any

import pytest

from crystal_lsp.clones.align import pooled
from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.scan import run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store

PINNED = pathlib.Path(__file__).resolve().parents[3] / "data" / "pinned"
CONFIG = ScanConfig(show_similar=True)

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform"
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("pooled")
    with tarfile.open(PINNED / "corpus.tar.gz") as archive:
        archive.extractall(root, filter="data")
    return root


def scan(root: pathlib.Path, cache: pathlib.Path, jobs: int) -> list[dict[str, Any]]:
    with Store(str(cache)) as store:
        result = run_scan(
            str(root),
            list_files(str(root), CONFIG),
            CONFIG,
            store=store,
            jobs=jobs,
            use_cache=False,
        )
    return [f.to_json() for f in result.findings]


def test_pooled_outcomes_give_the_same_findings(
    corpus: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pooled_runs: list[int] = []
    outcomes = pooled.Pool.outcomes

    def counted(self: pooled.Pool, work: Any, chains: Any, outcome: Any) -> Any:
        found = outcomes(self, work, chains, outcome)
        if found is not None:
            pooled_runs.append(len(found))
            assert found == [outcome(work, chain) for chain in chains]
        return found

    monkeypatch.setattr(pooled, "MIN_CHAINS", 1)
    monkeypatch.setattr(pooled.Pool, "outcomes", counted)
    alone = scan(corpus, tmp_path / "alone", jobs=1)
    assert not pooled_runs
    forked = scan(corpus, tmp_path / "forked", jobs=2)
    assert pooled_runs and sum(pooled_runs) > 50
    assert forked == alone
    assert len(alone) > 40


def test_few_chains_stay_in_process() -> None:
    assert pooled.Pool(2).outcomes(object(), [], lambda work, chain: chain) is None  # type: ignore[arg-type]

"""Each distinct content is tokenized once per scan, whatever its paths, with per-path results.

Four copies of a tree of real code (the pinned corpus, tests/data/pinned) lex each content once;
every file's entry equals the one its own path gives, and the scan's findings equal those of a
scan that builds every path by itself. The same bytes under two languages are two contents.
"""

from __future__ import annotations

import pathlib
import shutil
import tarfile
from typing import Any

import pytest

import crystal_lsp.clones.index.repo as repo_module
from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.index.state import BuildJob, build_job
from crystal_lsp.clones.scan import run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.text.entries import build_entry
from crystal_lsp.text.sources import read_source

PINNED = pathlib.Path(__file__).resolve().parents[3] / "data" / "pinned"
CONFIG = ScanConfig(show_similar=True)


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """Four copies of a few files of the pinned corpus, and one file also as JavaScript."""
    source = tmp_path_factory.mktemp("source")
    with tarfile.open(PINNED / "corpus.tar.gz") as archive:
        archive.extractall(source, filter="data")
    root = tmp_path_factory.mktemp("copies")
    python = sorted((source / "rich").glob("*.py"))[:6]
    script = sorted((source / "three-math").glob("*.js"))[:4]
    for k in range(4):
        for file in python + script:
            target = root / f"copy{k}" / file.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target)
    shutil.copyfile(script[0], root / "as-typescript.ts")  # the same bytes, another language
    return root


def counting(calls: list[BuildJob]) -> Any:
    def run(job: BuildJob) -> tuple[bytes, bytes]:
        calls.append(job)
        return build_job(job)

    return run


def test_each_content_is_lexed_once(copies: pathlib.Path, tmp_path: pathlib.Path) -> None:
    calls: list[BuildJob] = []
    with pytest.MonkeyPatch.context() as patch, Store(str(tmp_path / "cache")) as store:
        patch.setattr(repo_module, "build_job", counting(calls))
        index = RepoIndex(str(copies), CONFIG, store, jobs=1)
        stats = index.refresh(list_files(str(copies), CONFIG))
    assert stats.files == 41 and stats.tokenized == 41
    contents = {(state.sha, state.entry.language) for state in index.files.values()}
    assert len(calls) == len(contents) == 11
    for rel, state in index.files.items():
        source = read_source(str(copies / rel), CONFIG.max_file_bytes, str(copies))
        alone = build_entry(
            rel,
            source.text,
            state.entry.language,
            min_tokens=CONFIG.min_tokens,
            min_lines=CONFIG.min_lines,
        )
        assert state.entry.light_json() == alone.light_json(), rel
        assert index.heavy(rel) == alone.heavy, rel


def test_findings_equal_a_per_path_build(copies: pathlib.Path, tmp_path: pathlib.Path) -> None:
    def scan(cache: pathlib.Path) -> list[dict[str, Any]]:
        with Store(str(cache)) as store:
            result = run_scan(
                str(copies), list_files(str(copies), CONFIG), CONFIG, store=store, jobs=1
            )
        return [f.to_json() for f in result.findings]

    shared = scan(tmp_path / "shared")
    with pytest.MonkeyPatch.context() as patch:
        # per path: one build per file, as before content addressing
        build = RepoIndex._build

        def per_path(
            self: RepoIndex, jobs: list[tuple[str, str, bytes | None]], skipped: Any, progress: Any
        ) -> list[Any]:
            return [out for job in jobs for out in build(self, [job], skipped, progress)]

        patch.setattr(RepoIndex, "_build", per_path)
        alone = scan(tmp_path / "alone")
    assert len(shared) > 5
    assert shared == alone


def test_a_pool_build_equals_a_serial_one(copies: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """The first file of each language is built here, the others in the pool: same entries."""
    many = tmp_path / "many"
    for k in range(3):  # enough distinct contents for the pool
        for file in sorted(copies.glob("copy0/*")):
            target = many / f"v{k}" / file.name
            target.parent.mkdir(parents=True, exist_ok=True)
            mark = "#" if file.suffix == ".py" else "//"
            target.write_bytes(file.read_bytes() + f"\n{mark} {k}\n".encode())
    files = list_files(str(many), CONFIG)
    with Store(str(tmp_path / "c1")) as s1, Store(str(tmp_path / "c2")) as s2:
        serial = RepoIndex(str(many), CONFIG, s1, jobs=1)
        pooled = RepoIndex(str(many), CONFIG, s2, jobs=2)
        assert serial.refresh(files).tokenized == pooled.refresh(files).tokenized == 30
        assert {s.entry.language for s in pooled.files.values()} == {"python", "javascript"}
        for rel, state in serial.files.items():
            assert pooled.files[rel].entry.light_json() == state.entry.light_json(), rel
            assert pooled.heavy(rel) == serial.heavy(rel), rel

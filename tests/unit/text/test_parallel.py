"""Tokenizing in worker processes gives the same tokens as tokenizing in-process."""

from __future__ import annotations

import pytest

from crystal_lsp.text import parallel
from crystal_lsp.text.parallel import chunked, tokenize_many
from crystal_lsp.text.tokens import tokenize

JOBS = [
    (f"f{i}.py", f"def f{i}(x):\n    # note {i}\n    return x * {i} + 'é😀'\n", None)
    for i in range(130)
] + [("Main.java", "class Main { int x = 1; } // c", "java"), ("notes", "zzz qqq", None)]


def test_serial_equals_tokenize() -> None:
    progress: list[int] = []
    out = tokenize_many(JOBS, processes=1, progress=progress.append)
    assert sum(progress) == len(JOBS)
    assert out == [tokenize(src, lang, name) for name, src, lang in JOBS]
    assert [t.language for t in out[-2:]] == ["java", "generic"]


def test_process_pool_equals_serial() -> None:
    serial = tokenize_many(JOBS, processes=1, keep_comments=True)
    progress: list[int] = []
    pooled = tokenize_many(
        JOBS, processes=2, keep_comments=True, progress=progress.append, chunk_size=16
    )
    assert pooled == serial
    assert [t.language for t in pooled] == [t.language for t in serial]
    assert sum(progress) == len(JOBS)
    assert "# note 0" in pooled[0].texts  # comments kept in the workers too


def test_chunked() -> None:
    assert [len(c) for c in chunked(JOBS, 50)] == [50, 50, 32]


def test_the_default_jobs_leave_a_loaded_machine_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "available_cpus", lambda: 4)
    for load, jobs in ((0.0, 4), (0.9, 4), (1.2, 3), (3.5, 1), (18.0, 1)):
        monkeypatch.setattr(parallel.os, "getloadavg", lambda load=load: (load, load, load))
        assert parallel.default_jobs() == jobs, load

"""Tree edit distance (Zhang & Shasha 1989) with unit costs, and TRS.

``TED`` is the least number of node insertions, deletions and relabellings turning one ordered
labelled tree into the other; TRS is ``1 − TED / (|T1| + |T2|)`` (Tran et al.). The paper's TED
also allows *moves*, which exact tree edit distance algorithms (Zhang–Shasha, APTED) do not.

Two implementations of the same algorithm give identical integers: a kernel compiled with
``numba`` (installed with ``crystal-lsp[ruby]``) and a pure-Python one. Measured on tree pairs from
the benchmark sets (bench/results/ruby_choices.md), the compiled kernel is 44–66x faster than the
pure-Python one, which is itself 2–14x faster than the ``apted`` package; ``zss`` is slower still.
Both check the optional deadline between keyroots of the first tree.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

from crystal_lsp.ruby.options import Timeout
from crystal_lsp.ruby.trees import Ast

_CHUNK = 32  # keyroots per compiled call, between deadline checks


def tree_edit_distance(a: Ast, b: Ast, deadline: float | None = None, backend: str = "auto") -> int:
    """Unit-cost Zhang–Shasha distance; ``deadline`` is a ``time.perf_counter()`` value."""
    if not len(a) or not len(b):
        return len(a) + len(b)
    if backend == "auto":
        backend = "numba" if _kernel() is not None else "python"
    if backend == "numba":
        return _ted_numba(a, b, deadline)
    return _ted_python(a, b, deadline)


def backend() -> str:
    """The implementation used by default: ``numba`` or ``python``."""
    return "numba" if _kernel() is not None else "python"


def trs_from_distance(distance: int, size_a: int, size_b: int) -> float:
    """TRS from a tree edit distance and the two tree sizes."""
    return 1.0 - distance / (size_a + size_b) if size_a + size_b else 1.0


def _ted_python(a: Ast, b: Ast, deadline: float | None) -> int:
    lab1, l1, lab2, l2 = a.labels, a.leftmost, b.labels, b.leftmost
    n2 = len(lab2)
    td = [[0] * n2 for _ in range(len(lab1))]
    for i in a.keyroots:
        if deadline is not None and time.perf_counter() > deadline:
            raise Timeout
        li = l1[i]
        for j in b.keyroots:
            lj = l2[j]
            width = j - lj + 2
            cols = range(1, width)
            l2s = [x - lj for x in l2[lj : j + 1]]
            lab2s = lab2[lj : j + 1]
            fd = [list(range(width))]
            for x in range(1, i - li + 2):
                ix = li + x - 1
                lix = l1[ix] - li
                labx = lab1[ix]
                prev = fd[x - 1]
                cur = [x] * width
                tdrow = td[ix]
                base = fd[lix]
                whole = lix == 0
                for y in cols:
                    jy = lj + y - 1
                    ly = l2s[y - 1]
                    if whole and ly == 0:
                        v = prev[y - 1] + (labx != lab2s[y - 1])
                        d = prev[y] + 1
                        if d < v:
                            v = d
                        d = cur[y - 1] + 1
                        if d < v:
                            v = d
                        tdrow[jy] = v
                    else:
                        v = base[ly] + tdrow[jy]
                        d = prev[y] + 1
                        if d < v:
                            v = d
                        d = cur[y - 1] + 1
                        if d < v:
                            v = d
                    cur[y] = v
                fd.append(cur)
    return td[-1][-1]


def _ted_numba(a: Ast, b: Ast, deadline: float | None) -> int:
    import numpy as np

    kernel = _kernel()
    arrays_a, arrays_b = _arrays(a), _arrays(b)
    td = np.zeros((len(a), len(b)), np.int32)
    fd = np.zeros((len(a) + 1, len(b) + 1), np.int32)
    keyroots = arrays_a[2]
    for start in range(0, len(keyroots), _CHUNK):
        if deadline is not None and time.perf_counter() > deadline:
            raise Timeout
        kernel(*arrays_a, *arrays_b, td, fd, start, min(start + _CHUNK, len(keyroots)))
    return int(td[-1, -1])


def _arrays(tree: Ast) -> Any:
    if tree._arrays is None:
        import numpy as np

        tree._arrays = (
            np.asarray(tree.labels, np.int32),
            np.asarray(tree.leftmost, np.int32),
            np.asarray(tree.keyroots, np.int32),
        )
    return tree._arrays


_KERNEL: list[Any] = []


def _kernel() -> Any:
    """The numba-compiled kernel, or ``None`` when numba is not installed."""
    if not _KERNEL:
        try:
            numba = importlib.import_module("numba")
        except ImportError:
            _KERNEL.append(None)
        else:
            _KERNEL.append(numba.njit(cache=True, nogil=True)(_zs_keyroots))
    return _KERNEL[0]


def _zs_keyroots(
    lab1: Any,
    l1: Any,
    kr1: Any,
    lab2: Any,
    l2: Any,
    kr2: Any,
    td: Any,
    fd: Any,
    first: int,
    stop: int,
) -> None:  # pragma: no cover - compiled by numba
    """Zhang–Shasha's forest distances for keyroots ``kr1[first:stop]`` (numba kernel)."""
    for a in range(first, stop):
        i = kr1[a]
        li = l1[i]
        for b in range(kr2.shape[0]):
            j = kr2[b]
            lj = l2[j]
            width = j - lj + 2
            for y in range(width):
                fd[0, y] = y
            for x in range(1, i - li + 2):
                ix = li + x - 1
                lix = l1[ix] - li
                labx = lab1[ix]
                fd[x, 0] = x
                for y in range(1, width):
                    jy = lj + y - 1
                    ly = l2[jy] - lj
                    v = fd[x - 1, y] + 1
                    d = fd[x, y - 1] + 1
                    if d < v:
                        v = d
                    if lix == 0 and ly == 0:
                        d = fd[x - 1, y - 1] + (1 if labx != lab2[jy] else 0)
                        if d < v:
                            v = d
                        td[ix, jy] = v
                    else:
                        d = fd[lix, ly] + td[ix, jy]
                        if d < v:
                            v = d
                    fd[x, y] = v

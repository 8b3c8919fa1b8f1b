"""Module and function sizes of the package and the hook (the style guide's limits).

No module of ``crystal_lsp/`` or ``hooks/`` over 500 lines, no function over 60 lines: past those
sizes a module hides its layers and a function its steps. No C file of the native core over
1,500 lines (one per concern, every one compiled by setup.py), no benchmark script or module over
600 lines (one question per script, shared code in ``bench/benchlib/``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    p
    for root in ("crystal_lsp", "hooks")
    for p in (REPO / root).rglob("*.py")
    if "examples" not in p.parts
)
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
C_SOURCES = sorted(p for ext in ("*.c", "*.h") for p in (REPO / "crystal_lsp").rglob(ext))
MAX_C_LINES = 1_500
BENCH_SOURCES = sorted((REPO / "bench").rglob("*.py"))
MAX_BENCH_LINES = 600


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_module_and_function_sizes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE_LINES, f"{path.name}: over {MAX_MODULE_LINES} lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {', '.join(long)}"


@pytest.mark.parametrize("path", C_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_c_file_sizes(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_C_LINES, f"{path.name}: {lines} lines, over {MAX_C_LINES}"


def test_setup_compiles_every_c_file_of_the_native_core() -> None:
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    [names] = [
        ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "NATIVE_SOURCES" for t in node.targets)
    ]
    metric = REPO / "crystal_lsp" / "metric"
    assert sorted(f"{name}.c" for name in names) == sorted(p.name for p in metric.glob("*.c"))
    assert C_SOURCES and all(p.parent == metric for p in C_SOURCES)


@pytest.mark.parametrize("path", BENCH_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_benchmark_script_sizes(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_BENCH_LINES, (
        f"{path.relative_to(REPO)}: {lines} lines, over {MAX_BENCH_LINES}"
    )

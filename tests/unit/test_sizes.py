"""Module and function sizes of the package and the hook (the style guide's limits).

No module of ``crystal_lsp/`` or ``hooks/`` over 500 lines, no function over 60 lines: past those
sizes a module hides its layers and a function its steps.
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

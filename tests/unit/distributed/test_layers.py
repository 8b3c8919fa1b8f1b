"""The engine takes plain parameters: no module of ``crystal_lsp.distributed`` sees the CLI."""

from __future__ import annotations

import ast
import pathlib

import pytest

import crystal_lsp.distributed

PACKAGE = pathlib.Path(crystal_lsp.distributed.__file__).parent


def _imports(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_no_argparse_and_no_cli(path: pathlib.Path) -> None:
    imported = _imports(path)
    assert "argparse" not in imported
    assert not {n for n in imported if n == "crystal_lsp.cli" or n.startswith("crystal_lsp.cli.")}
    assert "Namespace" not in path.read_text(encoding="utf-8")

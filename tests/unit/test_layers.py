"""The layering rule, read from the imports of every module of the package.

text → metric → clones → adapters (cli, server, distributed, ruby, mcp, and the top-level hooks):
a layer imports only the layers below it and the foundation modules (``errors``, ``version``);
no core module imports an adapter; the Dask engine takes plain parameters, never argparse or the
CLI; only ``metric/ngrams.py`` loads the native core; nothing inside the package imports the
package's own ``__init__`` (the public facade), which would be an import cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "crystal_lsp"
FOUNDATION = {"crystal_lsp.errors", "crystal_lsp.version"}
CORE = ("text", "metric", "clones")
ALLOWED = {
    "text": ("text",),
    "metric": ("text", "metric"),
    "clones": ("text", "metric", "clones"),
}
ADAPTERS = ("cli", "server", "distributed", "ruby", "mcp")


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports_of(path: Path) -> list[tuple[str, int, bool]]:
    """``(imported module, line, only for type checking)`` of every import in a file.

    ``from a import b`` yields ``a.b`` when ``b`` is a module of the package, else ``a``;
    string arguments of ``importlib.import_module`` count as imports too.
    """
    tree = ast.parse(path.read_text(), str(path))
    typing_only = _type_checking_lines(tree)
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    out: list[tuple[str, int, bool]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = (package or _module_name(path)).split(".")
                base = ".".join(anchor[: len(anchor) - node.level + 1] + ([base] if base else []))
            names = [
                f"{base}.{a.name}" if _is_module(f"{base}.{a.name}") else base for a in node.names
            ]
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names = [str(node.args[0].value)]
        for name in names:
            out.append((name, node.lineno, node.lineno in typing_only))
    return out


def _is_module(name: str) -> bool:
    if not name.startswith("crystal_lsp"):
        return False
    path = REPO.joinpath(*name.split("."))
    return (
        path.with_suffix(".py").exists()
        or (path / "__init__.py").exists()
        or any(path.parent.glob(path.name + ".*.so"))
        or path.with_suffix(".pyi").exists()
    )


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "crystal_lsp" or len(parts) < 2:
        return None
    return parts[1]


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "examples" not in p.parts)


def test_the_package_is_layered() -> None:
    assert {
        p.relative_to(PACKAGE).parts[0] for p in MODULES if len(p.relative_to(PACKAGE).parts) > 1
    } >= set(CORE)
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert flat == ["__init__.py", "__main__.py", "errors.py", "version.py"], flat


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layering(path: Path) -> None:
    me = _module_name(path)
    layer = _layer(me)
    problems = []
    for name, line, typing_only in imports_of(path):
        target = _layer(name)
        where = f"{path.relative_to(REPO)}:{line} imports {name}"
        if name == "crystal_lsp" and me != "crystal_lsp":
            problems.append(f"{where} (the public facade, from inside the package: a cycle)")
        if name.endswith("._native") and me != "crystal_lsp.metric.ngrams" and not typing_only:
            problems.append(f"{where} (only metric/ngrams.py dispatches to the native core)")
        if target is None or name in FOUNDATION or me in FOUNDATION | {"crystal_lsp"}:
            continue
        if layer in ALLOWED and target not in ALLOWED[layer]:
            problems.append(f"{where} ({layer} may import only {', '.join(ALLOWED[layer])})")
        if layer == "distributed" and (target == "cli" or name == "argparse"):
            problems.append(f"{where} (the engine takes plain parameters)")
    if layer == "distributed":
        problems += [
            f"{path.relative_to(REPO)}:{line} imports argparse"
            for name, line, _ in imports_of(path)
            if name == "argparse"
        ]
    assert not problems, "\n".join(dict.fromkeys(problems))


def test_foundation_imports_nothing_above_it() -> None:
    """``errors`` may name the version in its messages; neither imports anything else."""
    assert not [n for n, _, _ in imports_of(PACKAGE / "version.py") if n.startswith("crystal_lsp")]
    assert {n for n, _, _ in imports_of(PACKAGE / "errors.py") if n.startswith("crystal_lsp")} <= {
        "crystal_lsp.version"
    }


@pytest.mark.parametrize("path", sorted((REPO / "hooks").glob("*.py")), ids=lambda p: p.name)
def test_the_hook_is_an_adapter_over_the_core(path: Path) -> None:
    """The top-level hooks/ uses the core, never the CLI or the server."""
    bad = [
        (name, line)
        for name, line, _ in imports_of(path)
        if _layer(name) in ("cli", "server", "mcp")
    ]
    assert not bad


def test_imports_are_read() -> None:
    """The reader sees absolute, relative, module-from-package and import_module imports."""
    found = {name for name, _, _ in imports_of(PACKAGE / "clones" / "finder.py")}
    assert "crystal_lsp.clones.similarity" in found
    found = {name for name, _, _ in imports_of(REPO / "hooks" / "clone_check.py")}
    assert any(name.startswith("crystal_lsp_hooks") or name.startswith("hooks") for name in found)


# The clone layer's own order: what a finding is made of comes before what makes it, and the
# orchestration (finder, search, scan, ...) before the reports that render its results.
CLONES_ORDER = ("index", "align", "copies", "top", "reports")


def _clones_part(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["crystal_lsp", "clones"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in CLONES_ORDER else "top"


@pytest.mark.parametrize(
    "path",
    sorted(p for p in (PACKAGE / "clones").rglob("*.py")),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_clone_layer_sub_packages_import_downwards(path: Path) -> None:
    """index -> align -> copies -> the orchestration (finder, search, scan, ...) -> reports.

    The modules at the top of ``clones`` that the sub-packages build on (settings, options,
    store, snapshot, similarity, findings, files, git, globs) may be imported from anywhere.
    """
    me = _clones_part(_module_name(path))
    if me is None:
        return
    foundation = {
        "settings",
        "options",
        "store",
        "snapshot",
        "similarity",
        "findings",
        "files",
        "git",
        "globs",
    }
    problems = []
    for name, line, _ in imports_of(path):
        target = _clones_part(name)
        if target is None or (target == "top" and name.split(".")[2] in foundation):
            continue
        where = f"{path.relative_to(REPO)}:{line} imports {name}"
        if CLONES_ORDER.index(target) > CLONES_ORDER.index(me):
            problems.append(f"{where} ({me} comes before {target})")
    assert not problems, "\n".join(problems)


def _core_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        me = _module_name(path)
        if _layer(me) not in CORE:
            continue
        graph[me] = {n for n, _, _ in imports_of(path) if _layer(n) in CORE and n != me}
    return graph


@pytest.mark.parametrize("package", ["crystal_lsp.clones", "crystal_lsp.text"])
def test_no_import_cycle_in_a_core_package(package: str) -> None:
    """No module of the package reaches itself through imports (type-only and lazy ones too)."""
    graph = {
        m: {n for n in g if n.startswith(package)}
        for m, g in _core_graph().items()
        if m.startswith(package)
    }
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)

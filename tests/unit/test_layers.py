"""The layering rule, read from the imports of every module of the package.

text → metric → clones → adapters (cli, server, distributed, ruby, mcp, and the top-level hooks):
a layer imports only the layers below it and the foundation modules (``errors``, ``version``);
no core module imports an adapter; the Dask engine takes plain parameters, never argparse or the
CLI; only ``metric/ngrams.py`` loads the native core; nothing inside the package imports the
package's own ``__init__`` (the public facade), which would be an import cycle; no import circle
anywhere in the package (lazy and type-only imports count); and the language server's features sit
on its core (docs/server.md).
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


def package_graph() -> dict[str, set[str]]:
    """Every module of the package -> the package's modules it imports (lazy and type-only too)."""
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        me = _module_name(path)
        graph[me] = {n for n, _, _ in imports_of(path) if _layer(n) is not None and n != me}
    return graph


def cycles_of(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a graph, each as the path that closes it (empty: none)."""
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
    return cycles


def test_no_import_cycle_anywhere() -> None:
    """No module of the package reaches itself through imports (type-only and lazy ones too)."""
    cycles = cycles_of(package_graph())
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_cycles_are_found() -> None:
    """The check sees a circle through a type-only import and one through a lazy import."""
    assert cycles_of({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles_of({"a": {"b"}, "b": set()}) == []
    found = {
        (name, typing_only)
        for name, _, typing_only in imports_of(PACKAGE / "metric" / "codebleu.py")
    }
    assert ("crystal_lsp.metric.pairmetric", True) in found  # read under TYPE_CHECKING
    lazy = {name for name, _, _ in imports_of(PACKAGE / "metric" / "registry.py")}
    assert "crystal_lsp.metric.codebleu" in lazy  # read inside a function


# The language server: a core (transport, messages to the client, lifecycle, and the interface
# features are handed), the state it shares with features, the features, and the composition
# that puts them together (the server class and the LSP handler table). See docs/server.md.
SERVER = "crystal_lsp.server"
SERVER_STATE = {"workspace", "buffers", "memory", "settings", "positions", "uris"}
SERVER_COMPOSITION = {SERVER, f"{SERVER}.app", f"{SERVER}.handlers"}
SERVER_ALLOWED = {
    "state": {"state"},
    "core": {"state", "core"},
    "feature": {"state", "core", "feature"},
    "composition": {"state", "core", "feature", "composition"},
}


def server_role(module: str) -> str | None:
    """Which part of the server a module is (None: not the server's)."""
    if module in SERVER_COMPOSITION:
        return "composition"
    if not module.startswith(SERVER + "."):
        return None
    if module.startswith(f"{SERVER}.core"):
        return "core"
    return "state" if module.split(".")[2] in SERVER_STATE else "feature"


@pytest.mark.parametrize(
    "path",
    sorted((PACKAGE / "server").rglob("*.py")),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_server_features_sit_on_the_core(path: Path) -> None:
    """The core imports no feature, features never the server class, the state neither."""
    me = server_role(_module_name(path))
    assert me is not None
    problems = []
    for name, line, _ in imports_of(path):
        target = server_role(name)
        if target is not None and target not in SERVER_ALLOWED[me]:
            where = f"{path.relative_to(REPO)}:{line} imports {name}"
            problems.append(f"{where} (the server's {me} may not import its {target})")
    assert not problems, "\n".join(problems)


def test_server_roles() -> None:
    """The rule knows the server's parts (a renamed module does not slip out of it)."""
    assert server_role("crystal_lsp.server.core.interface") == "core"
    assert server_role("crystal_lsp.server.workspace") == "state"
    assert server_role("crystal_lsp.server.hover") == "feature"
    assert server_role("crystal_lsp.server.app") == "composition"
    assert server_role("crystal_lsp.clones.finder") is None
    for name in SERVER_STATE:
        assert (PACKAGE / "server" / f"{name}.py").exists(), name

"""Planting copies of Python functions: candidates, their renamed and edited copies (``ast``), the
files that receive them."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

from plant_common import (
    MAX_LINES,
    MIN_LINES,
    Plan,
    _apply_edits,
    _fresh_names,
    _lines,
    _rng_for,
    _t3_lines,
)


def _py_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Assert, ast.Delete)


class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.m = mapping

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.m:
            node.id = self.m[node.id]
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        self.generic_visit(node)
        if node.arg in self.m:
            node.arg = self.m[node.arg]
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        if node.name in self.m:
            node.name = self.m[node.name]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        self.generic_visit(node)
        if node.name and node.name in self.m:
            node.name = self.m[node.name]
        return node


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _whole_lines(stmt: ast.stmt, lines: list[str], starts: dict[int, int]) -> bool:
    """True when stmt alone fills lines lineno..end_lineno (no ';' neighbours)."""
    first = lines[stmt.lineno - 1]
    last = lines[stmt.end_lineno - 1]  # type: ignore[operator]
    if first[: _py_col(first, stmt.col_offset)].strip():
        return False
    rest = last[_py_col(last, stmt.end_col_offset) :].strip()  # type: ignore[arg-type]
    if rest and not rest.startswith("#"):
        return False
    return all(
        starts.get(ln, 0) <= 1
        for ln in range(stmt.lineno, stmt.end_lineno + 1)  # type: ignore[operator]
    )


_PY_TEMPLATES = (
    "print('{f}:', {v})",
    "assert {v} is not None",
    "{v}_repr = repr({v})",
    "logging.debug('{f}: %r', {v})",
)


def _python_plan(
    path: str, lines: list[str], node: ast.FunctionDef, is_method: bool, seed: int
) -> Plan | None:
    """Plan the three copies of one function, or None when it is not eligible."""
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Nonlocal, ast.ClassDef, ast.Match, ast.Import, ast.ImportFrom)):
            return None
    start, end = node.lineno, node.end_lineno or node.lineno
    indent = lines[start - 1][: len(lines[start - 1]) - len(lines[start - 1].lstrip())]
    globals_: set[str] = set()
    locals_: list[str] = []

    def add(n: str) -> None:
        if n not in locals_ and n not in ("self", "cls"):
            locals_.append(n)

    for sub in ast.walk(node):
        if isinstance(sub, ast.Global):
            globals_.update(sub.names)
        elif isinstance(sub, ast.arg):
            add(sub.arg)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub is not node:
            add(sub.name)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            add(sub.name)
    locals_ = [n for n in locals_ if n not in globals_ and n != node.name]
    if not locals_:
        return None
    func_text = "".join(lines[start - 1 : end])
    taken = set(re.findall(r"\w+", func_text))
    rng = _rng_for(seed, path, start)
    olds = [node.name, *locals_]
    mapping = _fresh_names(rng, olds, taken, camel=False)
    local_set = set(locals_)

    # positions (0-based line, char col) of every occurrence to rename
    edits: list[tuple[int, int, int, str]] = []

    def at(lineno: int, byte_col: int, old: str) -> bool:
        li = lineno - 1
        c = _py_col(lines[li], byte_col)
        if lines[li][c : c + len(old)] != old:
            return False
        edits.append((li, c, c + len(old), mapping[old]))
        return True

    def find_after(lineno: int, byte_col: int, pattern: str, old: str) -> bool:
        li = lineno - 1
        c = _py_col(lines[li], byte_col)
        m = re.compile(pattern).search(lines[li], c)
        if not m or m.group(1) != old:
            return False
        edits.append((li, m.start(1), m.end(1), mapping[old]))
        return True

    ok = find_after(start, node.col_offset, r"def\s+(\w+)", node.name)
    for sub in ast.walk(node):
        if not ok:
            return None
        if isinstance(sub, ast.Name) and sub.id in mapping:
            if sub.id in local_set or sub.id == node.name:
                ok = at(sub.lineno, sub.col_offset, sub.id)
        elif isinstance(sub, ast.arg) and sub.arg in local_set:
            ok = at(sub.lineno, sub.col_offset, sub.arg)
        elif (
            isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))
            and sub is not node
            and sub.name in local_set
        ):
            ok = find_after(sub.lineno, sub.col_offset, r"def\s+(\w+)", sub.name)
        elif isinstance(sub, ast.ExceptHandler) and sub.name in local_set:
            # 'except X as name:' may span lines: search up to the body's first line
            found = False
            assert sub.name is not None
            for ln in range(sub.lineno, sub.body[0].lineno + 1):
                col = sub.col_offset if ln == sub.lineno else 0
                if find_after(ln, col, r"\bas\s+(\w+)\s*:", sub.name):
                    found = True
                    break
            ok = found
    if not ok or len({(e[0], e[1]) for e in edits}) != len(edits):
        return None
    renamed = _apply_edits(lines, edits)
    t2_text = "".join(renamed[start - 1 : end])

    # check: the renamed text parses to the original's tree with the names mapped
    expect = _Renamer(mapping).visit(copy.deepcopy(node))
    try:
        got = _parse_fragment(t2_text, indent)
    except SyntaxError:
        return None
    if ast.dump(got) != ast.dump(expect):
        return None

    # Type 3: delete one simple statement of a block with 2+ statements, insert one
    starts: dict[int, int] = {}
    for sub in ast.walk(node):
        if isinstance(sub, ast.stmt):
            starts[sub.lineno] = starts.get(sub.lineno, 0) + 1
    deletable: list[ast.stmt] = []
    for sub in ast.walk(node):
        for blk in ("body", "orelse", "finalbody"):
            stmts = getattr(sub, blk, None)
            if not isinstance(stmts, list) or len(stmts) < 2:
                continue
            for i, st in enumerate(stmts):
                if (
                    isinstance(st, _SIMPLE)
                    and not (i == 0 and _is_docstring(st))
                    and _whole_lines(st, lines, starts)
                    and len([s for s in stmts if not _is_docstring(s)]) >= 2
                ):
                    deletable.append(st)
    body = node.body
    first = 1 if _is_docstring(body[0]) else 0
    params = [
        a.arg
        for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
        if a.arg not in ("self", "cls")
    ]
    spots: list[tuple[int, str]] = []  # (index in body, variable)
    for k in range(first, len(body)):
        st = body[k]
        if lines[st.lineno - 1][: _py_col(lines[st.lineno - 1], st.col_offset)].strip():
            continue
        avail = list(params)
        for prev in body[first:k]:
            if isinstance(prev, ast.Assign):
                avail += [t.id for t in prev.targets if isinstance(t, ast.Name)]
        for v in avail:
            spots.append((k, v))
    if not deletable or not spots:
        return None
    rng3 = _rng_for(seed, "t3", path, start)
    for _attempt in range(20):
        victim = rng3.choice(deletable)
        k, var = rng3.choice(spots)
        at_stmt = body[k]
        if at_stmt is victim:
            continue
        # the variable must not be defined by the deleted statement
        if isinstance(victim, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == var for t in victim.targets
        ):
            continue
        break
    else:
        return None
    new_var = mapping.get(var, var)
    new_name = mapping[node.name]
    ins_line_text = lines[at_stmt.lineno - 1]
    ins_indent = ins_line_text[: len(ins_line_text) - len(ins_line_text.lstrip())]
    stmt_text = rng3.choice(_PY_TEMPLATES).format(f=new_name, v=new_var)
    rel = renamed[start - 1 : end]
    d0, d1 = victim.lineno - start, (victim.end_lineno or victim.lineno) - start
    deleted_text = "".join(rel[d0 : d1 + 1])
    t3, ins_idx = _t3_lines(rel, (d0, d1), at_stmt.lineno - start, ins_indent + stmt_text + "\n")
    t3_text = "".join(t3)
    try:
        _parse_fragment(t3_text, indent)
    except SyntaxError:
        return None
    return Plan(
        path=path,
        start=start,
        end=end,
        name=node.name,
        is_method=is_method,
        indent=indent,
        texts={"t1": "".join(lines[start - 1 : end]), "t2": t2_text, "t3": t3_text},
        renames=mapping,
        inserted=stmt_text,
        inserted_line=ins_idx + 1,
        deleted=deleted_text.strip(),
        deleted_line=d0 + 1,
    )


def _parse_fragment(text: str, indent: str) -> ast.FunctionDef:
    """Parse a function's text that may be indented as a method (keeps it exact)."""
    src = ("class _C:\n" + text) if indent else text
    tree = ast.parse(src)
    node = tree.body[0]
    if indent:
        assert isinstance(node, ast.ClassDef)
        node = node.body[0]
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    return node  # type: ignore[return-value]


def python_candidates(root: Path, files: list[str], seed: int) -> list[Plan]:
    plans: list[Plan] = []
    for rel in files:
        raw = (root / rel).read_bytes()
        try:
            text = raw.decode("utf-8")
            tree = ast.parse(text)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        if "\t" in text:
            continue
        lines = _lines(text)
        found: list[tuple[ast.FunctionDef, bool]] = []
        for top in tree.body:
            if isinstance(top, ast.FunctionDef):
                found.append((top, False))
            elif isinstance(top, ast.ClassDef):
                found += [(m, True) for m in top.body if isinstance(m, ast.FunctionDef)]
        for node, is_method in found:
            n = (node.end_lineno or 0) - node.lineno + 1
            if node.decorator_list or not MIN_LINES <= n <= MAX_LINES:
                continue
            head = lines[node.lineno - 1]
            if is_method and (head[:4] != "    " or head[4:5].isspace()):
                continue
            plan = _python_plan(rel, lines, node, is_method, seed)
            if plan is not None:
                plans.append(plan)
    return plans


def python_targets(root: Path, files: list[str]) -> tuple[list[str], list[str]]:
    """(any file, files whose last statement is a class with 4-space body)."""
    anyf: list[str] = []
    cls: list[str] = []
    for rel in files:
        try:
            text = (root / rel).read_bytes().decode("utf-8")
            tree = ast.parse(text)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        if "\t" in text:
            continue
        anyf.append(rel)
        if tree.body and isinstance(tree.body[-1], ast.ClassDef):
            if tree.body[-1].body[0].col_offset == 4:
                cls.append(rel)
    return anyf, cls


def python_plant(target_text: str, copy_text: str) -> tuple[str, int]:
    """Append copy_text to the target (as a function, or inside the last class)."""
    base = target_text.rstrip("\n") + "\n\n\n"
    start = base.count("\n") + 1
    return base + copy_text.rstrip("\n") + "\n", start

"""Plant copies of real functions into a real corpus: the clone-quality probe.

Two corpora: CPython's standard library of the running interpreter (tests
excluded) and a subset of the JDK's ``java.base`` sources of the same size.
For each clone type (t1 exact, t2 consistently renamed, t3 renamed plus one
statement inserted and one deleted) the generator makes its own full copy of
the corpus, plants N copies of N real functions (each into a different existing
file) and writes a manifest with the original's and the copy's line ranges.
The same N originals and the same target files are used for the three types,
so the three columns of a results table differ only by the transformation.

Deterministic: everything follows from --seed and the corpus.  Run
``python bench/planted/generate.py --help``.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import copy
import hashlib
import json
import keyword
import os
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import java_methods as jm

GENERATOR_VERSION = 3
TYPES = ("t1", "t2", "t3")
DEFAULT_WORKDIR = Path(tempfile.gettempdir()) / "crystal-bench"
MIN_LINES, MAX_LINES = 8, 60

PY_EXCLUDED_DIRS = {"test", "tests", "idle_test", "site-packages", "__pycache__"}
# Debian's openjdk-17-source first (what the issue names), then any other JDK's src.zip.
JAVA_SRC_ZIPS = (
    "/usr/lib/jvm/openjdk-17/src.zip",
    "/usr/lib/jvm/openjdk-17/lib/src.zip",
    "/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip",
    "/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip",
)
# java.base packages kept: java.util (with its subpackages), java.io and java.time
# (with theirs): 533 files, 324k lines in JDK 17, close to CPython's 734 files, 327k lines.
JAVA_PACKAGES = ("java/util/", "java/io/", "java/time/")

# Vocabulary for fresh names: real words, not the old name with a suffix.
_NOUNS = """item entry record node value buffer chunk token payload target source result
total offset limit width label handle stream count index key text data path name mode flag
state queue table block field part piece element member unit slot cursor anchor marker bucket
batch span window frame layer packet message header prefix suffix pattern match hint spec
option setting config context scope owner parent child peer client worker task event signal
sample metric score weight ratio factor delta step phase stage level depth size length
capacity amount accum tally origin dest sink reader writer holder carrier bundle group cluster
series sequence column row cell grid tree branch leaf root edge link route channel port
address host domain realm region zone sector area section chapter page line word letter
symbol glyph char code digit number figure measure quota budget cost price rate speed
""".split()
_QUALIFIERS = """new old raw tmp next prev first last base main extra local inner outer cur
final partial full pending active spare alt saved cached parsed initial working staged
""".split()
_PY_AVOID = set(keyword.kwlist) | set(dir(builtins)) | {"self", "cls", "match", "case", "_"}


def _fresh_names(
    rng: random.Random, olds: list[str], taken: set[str], camel: bool
) -> dict[str, str]:
    """A new, unused, plausible name for each old name (deterministic given rng)."""
    out: dict[str, str] = {}
    used = set(taken) | set(olds)
    for old in olds:
        for _attempt in range(1000):
            noun = rng.choice(_NOUNS)
            if rng.random() < 0.5:
                name = noun
            else:
                q = rng.choice(_QUALIFIERS)
                name = q + noun.capitalize() if camel else f"{q}_{noun}"
            if old[:1].isupper():
                name = name[0].upper() + name[1:]
            if old.startswith("_") and not name.startswith("_"):
                name = "_" + name
            if name not in used and name not in _PY_AVOID and name not in jm.KEYWORDS:
                break
        else:  # pragma: no cover - the vocabulary is large
            raise RuntimeError("out of fresh names")
        used.add(name)
        out[old] = name
    return out


def _rng_for(seed: int, *parts: object) -> random.Random:
    return random.Random(f"{seed}:" + ":".join(str(p) for p in parts))


# ------------------------------------------------------------------ corpora


def python_stdlib() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def python_corpus_files(root: Path) -> list[str]:
    """Relative paths of the stdlib's .py files, tests and site-packages excluded."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in PY_EXCLUDED_DIRS)
        for f in sorted(filenames):
            if f.endswith(".py") and not f.startswith("test_"):
                out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(out)


def find_java_src_zip(explicit: str | None = None) -> Path:
    for cand in [explicit] if explicit else JAVA_SRC_ZIPS:
        if cand and Path(cand).is_file():
            return Path(cand).resolve()
    raise FileNotFoundError(
        "no JDK src.zip found: apt-get install -y openjdk-17-source, or pass --java-src"
    )


def prepare_original(lang: str, workdir: Path, java_src: str | None = None) -> dict[str, object]:
    """Copy the unmodified corpus to workdir/<lang>/original once; return its description."""
    base = workdir / lang
    orig = base / "original"
    info_path = base / "original.json"
    if info_path.is_file() and orig.is_dir():
        info: dict[str, object] = json.loads(info_path.read_text())
        return info
    if orig.exists():
        shutil.rmtree(orig)
    orig.mkdir(parents=True)
    if lang == "python":
        src = python_stdlib()
        files = python_corpus_files(src)
        for rel in files:
            dst = orig / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, dst)
        source = f"CPython {sys.version.split()[0]} stdlib at {src}"
    else:
        zpath = find_java_src_zip(java_src)
        files = []
        with zipfile.ZipFile(zpath) as z:
            for name in sorted(z.namelist()):
                if not name.startswith("java.base/") or not name.endswith(".java"):
                    continue
                rel = name[len("java.base/") :]
                if not rel.startswith(JAVA_PACKAGES):
                    continue
                dst = orig / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes(z.read(name))
                files.append(rel)
        source = f"{zpath} java.base/{{{','.join(p.rstrip('/') for p in JAVA_PACKAGES)}}}"
    lines = sum((orig / f).read_bytes().count(b"\n") for f in files)
    info = {"lang": lang, "source": source, "files": len(files), "lines": lines}
    info_path.write_text(json.dumps(info, indent=1) + "\n")
    return info


# ------------------------------------------------------------------ planting model


@dataclass
class Plan:
    """One function to copy: where it is and the text of each type's copy."""

    path: str  # relative path of the original
    start: int  # 1-based inclusive line range of the original
    end: int
    name: str
    is_method: bool
    indent: str
    texts: dict[str, str] = field(default_factory=dict)  # type -> planted text
    renames: dict[str, str] = field(default_factory=dict)
    inserted: str = ""
    inserted_line: int = 0  # line within the copy (1-based) of the inserted statement
    deleted: str = ""
    deleted_line: int = 0  # line within the original (1-based, of the function text)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _apply_edits(lines: list[str], edits: list[tuple[int, int, int, str]]) -> list[str]:
    """Replace (line index, col start, col end) spans, in character columns."""
    out = list(lines)
    for li, c0, c1, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        s = out[li]
        out[li] = s[:c0] + new + s[c1:]
    return out


def _t3_lines(
    lines: list[str],
    delete: tuple[int, int],
    insert_before: int,
    insert_text: str,
) -> tuple[list[str], int]:
    """Delete lines [d0, d1] and insert one line before line index insert_before.

    Returns the new lines and the 0-based index of the inserted line.
    """
    d0, d1 = delete
    out = list(lines)
    ins = insert_before
    if ins > d1:
        out.insert(ins, insert_text)
        del out[d0 : d1 + 1]
        ins -= d1 - d0 + 1
    else:
        del out[d0 : d1 + 1]
        out.insert(ins, insert_text)
    return out, ins


# ------------------------------------------------------------------ Python


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


# ------------------------------------------------------------------ Java


_JAVA_TEMPLATES = (
    'System.out.println("{f}: " + {v});',
    "java.util.Objects.requireNonNull({v});",
    "String {v}Text = String.valueOf({v});",
    "System.err.println({v});",
)


def _java_plan(path: str, jf: jm.JavaFile, m: jm.Method, seed: int) -> Plan | None:
    src = jf.src
    toks = jf.toks
    if m.modifiers & {"default", "abstract", "native"}:
        return None
    # the method must fill its lines
    first = toks[m.first_tok]
    last = toks[m.close_tok]
    ls = src.rfind("\n", 0, first.start) + 1
    le = src.find("\n", last.end)
    le = len(src) if le < 0 else le + 1
    if src[ls : first.start].strip():
        return None
    tail = src[last.end : le].strip()
    if tail and not tail.startswith("//"):
        return None
    text = src[ls:le]
    if '"""' in text or "\t" in text:
        return None
    locals_ = jm.declared_names(jf, m)
    locals_ = [n for n in locals_ if n != m.name]
    if not locals_:
        return None
    ident_set = {t.text for t in toks[m.first_tok : m.close_tok + 1] if t.kind == "ident"}
    rng = _rng_for(seed, path, m.start_line)
    mapping = _fresh_names(rng, [m.name, *locals_], ident_set | _java_common(), camel=True)
    occ = jm.rename_occurrences(jf, m, mapping, set(locals_))
    chars = list(src[ls:le])
    for j, new in sorted(occ, reverse=True):
        t = toks[j]
        chars[t.start - ls : t.end - ls] = list(new)
    t2_text = "".join(chars)
    # check: same token sequence with the mapping applied
    t2_toks = jm.lex(t2_text)
    orig_toks = [t.text for t in jm.lex(text)]
    renamed_idx = {j - m.first_tok for j, _ in occ}
    if len(t2_toks) != len(orig_toks) or any(
        (a.text != (mapping[b] if i in renamed_idx else b))
        for i, (a, b) in enumerate(zip(t2_toks, orig_toks))
    ):
        return None
    # Type 3 on the renamed text: positions come from re-parsing it inside a class
    wrapper = "class _C {\n" + t2_text + "}\n"
    wf = jm.parse(wrapper)
    if len(wf.methods) != 1:
        return None
    wm = wf.methods[0]
    stmts = jm.simple_statements(wf, wm)
    per_block: dict[int, int] = {}
    for s in stmts:
        per_block[s.block_open] = per_block.get(s.block_open, 0) + 1
    deletable = [s for s in stmts if per_block[s.block_open] >= 2]
    top = [s for s in stmts if s.depth == 0]
    params = jm.declared_names(wf, wm)
    new_params: list[str] = []
    # parameters: names declared inside the parameter list
    for j in range(wm.params_open + 1, wm.params_close):
        t = wf.toks[j]
        if t.kind == "ident" and t.text in params and t.text not in new_params:
            if wf.toks[j + 1].text in (",", ")"):
                new_params.append(t.text)
    spots: list[tuple[jm.Stmt, str]] = []
    for s in top:
        avail = list(new_params)
        for p in top:
            if p.first_tok >= s.first_tok:
                break
            # a declaration 'Type name = ...;' or 'Type name;' at the top level
            for j in range(p.first_tok + 1, p.last_tok):
                tk = wf.toks[j]
                if (
                    tk.kind == "ident"
                    and wf.toks[j + 1].text in ("=", ";")
                    and jm._is_type_end(wf.toks, j - 1, p.first_tok)
                ):
                    avail.append(tk.text)
                    break
        spots += [(s, v) for v in avail]
    if not deletable or not spots:
        return None
    rng3 = _rng_for(seed, "t3", path, m.start_line)
    lines2 = _lines(t2_text)
    for _attempt in range(20):
        victim = rng3.choice(deletable)
        at_stmt, var = rng3.choice(spots)
        if at_stmt is victim:
            continue
        vt = [t.text for t in wf.toks[victim.first_tok : victim.last_tok]]
        if var in (vt[: vt.index("=")] if "=" in vt else vt):
            continue
        break
    else:
        return None
    # wrapper line numbers are one more than the method text's
    ins_line = lines2[at_stmt.start_line - 2]
    ins_indent = ins_line[: len(ins_line) - len(ins_line.lstrip())]
    stmt_text = rng3.choice(_JAVA_TEMPLATES).format(f=mapping[m.name], v=var)
    d0, d1 = victim.start_line - 2, victim.end_line - 2
    deleted_text = "".join(lines2[d0 : d1 + 1])
    t3, ins_idx = _t3_lines(lines2, (d0, d1), at_stmt.start_line - 2, ins_indent + stmt_text + "\n")
    return Plan(
        path=path,
        start=first.line,
        end=last.line,
        name=m.name,
        is_method=True,
        indent="",
        texts={"t1": text, "t2": t2_text, "t3": "".join(t3)},
        renames=mapping,
        inserted=stmt_text,
        inserted_line=ins_idx + 1,
        deleted=deleted_text.strip(),
        deleted_line=d0 + 1,
    )


def _java_common() -> set[str]:
    return {"String", "Object", "System", "Objects", "List", "Map", "Set", "Math", "var"}


def java_candidates(root: Path, files: list[str], seed: int) -> list[Plan]:
    plans: list[Plan] = []
    for rel in files:
        try:
            src = (root / rel).read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        jf = jm.parse(src)
        for m in jf.methods:
            if not MIN_LINES <= m.end_line - m.start_line + 1 <= MAX_LINES:
                continue
            plan = _java_plan(rel, jf, m, seed)
            if plan is not None:
                plans.append(plan)
    return plans


def java_targets(root: Path, files: list[str]) -> list[str]:
    out: list[str] = []
    for rel in files:
        try:
            src = (root / rel).read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        if _java_insert_line(src) is not None:
            out.append(rel)
    return out


def _java_insert_line(src: str) -> int | None:
    """0-based line index of the closing brace of the file's first top-level class."""
    jf = jm.parse(src)
    for td in jf.types:
        if td.top_level and td.kind == "class" and td.close_tok > 0:
            t = jf.toks[td.close_tok]
            ls = src.rfind("\n", 0, t.start) + 1
            if src[ls : t.start].strip():
                return None
            return t.line - 1
    return None


def java_plant(target_text: str, copy_text: str) -> tuple[str, int]:
    li = _java_insert_line(target_text)
    assert li is not None
    lines = _lines(target_text)
    head = [*lines[:li], "\n"]
    start = len(head) + 1
    return "".join([*head, copy_text, *lines[li:]]), start


# ------------------------------------------------------------------ driver


def _choose(
    plans: list[Plan], targets_any: list[str], targets_cls: list[str], n: int, seed: int
) -> list[tuple[Plan, str]]:
    rng = random.Random(seed)
    order = list(plans)
    rng.shuffle(order)
    origins: set[str] = set()
    used_targets: set[str] = set()
    chosen: list[tuple[Plan, str]] = []
    for p in order:
        if len(chosen) == n:
            break
        if p.path in origins or p.path in used_targets:
            continue
        pool = targets_cls if p.is_method and p.indent else targets_any
        avail = [t for t in pool if t not in used_targets and t not in origins and t != p.path]
        if not avail:
            continue
        tgt = rng.choice(avail)
        origins.add(p.path)
        used_targets.add(tgt)
        chosen.append((p, tgt))
    if len(chosen) < n:
        raise RuntimeError(f"only {len(chosen)} of {n} functions could be planted")
    return chosen


def _javac_check(paths: list[Path]) -> str | None:
    """Parse-only javac run over the planted files: None when all parse."""
    javac = shutil.which("javac")
    if not javac or not paths:
        return None
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run(
            [
                javac,
                "-XDshould-stop.ifNoError=PARSE",
                "-XDshould-stop.ifError=PARSE",
                "-d",
                out,
                *map(str, paths),
            ],
            capture_output=True,
            text=True,
        )
    return None if proc.returncode == 0 else proc.stderr[-4000:]


def planted_dir(workdir: Path, lang: str, n: int, seed: int) -> Path:
    return workdir / lang / f"planted-n{n}-s{seed}"


def generate(
    lang: str, workdir: Path, n: int = 30, seed: int = 20240601, java_src: str | None = None
) -> dict[str, object]:
    """Make (or reuse) the corpora and manifests; return {type: manifest path, ...}."""
    info = prepare_original(lang, workdir, java_src)
    orig = workdir / lang / "original"
    out = planted_dir(workdir, lang, n, seed)
    key = hashlib.sha256(
        json.dumps([GENERATOR_VERSION, lang, n, seed, info], sort_keys=True).encode()
    ).hexdigest()[:16]
    stamp = out / "generator.json"
    manifests = {t: out / f"manifest_{t}.json" for t in TYPES}
    if stamp.is_file() and json.loads(stamp.read_text()).get("key") == key:
        if all(p.is_file() for p in manifests.values()) and all((out / t).is_dir() for t in TYPES):
            return {
                "original": str(orig),
                "info": info,
                **{t: str(p) for t, p in manifests.items()},
            }
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if lang == "python":
        files = python_corpus_files(orig)
        plans = python_candidates(orig, files, seed)
        t_any, t_cls = python_targets(orig, files)
        plant = python_plant
    else:
        files = sorted(
            os.path.relpath(os.path.join(d, f), orig)
            for d, _, fs in os.walk(orig)
            for f in fs
            if f.endswith(".java")
        )
        plans = java_candidates(orig, files, seed)
        t_any = java_targets(orig, files)
        t_cls = t_any
        plant = java_plant
    chosen = _choose(plans, t_any, t_cls, n, seed)
    for t in TYPES:
        root = out / t
        shutil.copytree(orig, root)
        entries = []
        changed: list[Path] = []
        for i, (p, tgt) in enumerate(chosen):
            tpath = root / tgt
            new_text, start = plant(tpath.read_bytes().decode("utf-8"), p.texts[t])
            tpath.write_bytes(new_text.encode("utf-8"))
            changed.append(tpath)
            n_lines = p.texts[t].count("\n")
            if lang == "python":
                tree = ast.parse(new_text, filename=str(tpath))
                node = _find_def(tree, start)
                if node is None or (node.end_lineno or 0) != start + n_lines - 1:
                    raise RuntimeError(f"planted copy not found where expected in {tpath}")
            entry: dict[str, object] = {
                "id": i,
                "name": p.name,
                "original": {"path": p.path, "start": p.start, "end": p.end},
                "copy": {"path": tgt, "start": start, "end": start + n_lines - 1},
            }
            if t != "t1":
                entry["renames"] = p.renames
            if t == "t3":
                entry["inserted"] = {"line": start + p.inserted_line - 1, "text": p.inserted}
                entry["deleted"] = {
                    "original_line": p.start + p.deleted_line - 1,
                    "text": p.deleted,
                }
            entries.append(entry)
        if lang == "java":
            err = _javac_check(changed)
            if err:
                raise RuntimeError(f"planted Java files do not parse ({t}):\n{err}")
        manifest = {
            "version": 1,
            "lang": lang,
            "type": t,
            "seed": seed,
            "n": n,
            "corpus": info,
            "root": str(root),
            "original_root": str(orig),
            "plants": entries,
        }
        manifests[t].write_text(json.dumps(manifest, indent=1) + "\n")
    stamp.write_text(json.dumps({"key": key, "candidates": len(plans)}) + "\n")
    return {"original": str(orig), "info": info, **{t: str(p) for t, p in manifests.items()}}


def _find_def(tree: ast.Module, line: int) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.lineno == line:
            return node
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lang", choices=("python", "java", "all"), default="all")
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    ap.add_argument("-n", type=int, default=30, help="planted copies per type (default 30)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--java-src", help="a JDK src.zip (default: openjdk-17-source's)")
    a = ap.parse_args(argv)
    for lang in ("python", "java") if a.lang == "all" else (a.lang,):
        res = generate(lang, a.workdir, a.n, a.seed, a.java_src)
        print(json.dumps({"lang": lang, **res}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

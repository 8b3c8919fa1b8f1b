"""Planting copies of Java methods: candidates, their renamed and edited copies, the files that
receive them."""

from __future__ import annotations

from pathlib import Path

import java_methods as jm
from plant_common import MAX_LINES, MIN_LINES, Plan, _fresh_names, _lines, _rng_for, _t3_lines

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

"""The kinds of misfire issue 31 saw on unseen projects, each on a small synthetic repository.

The unit tests of ``clones/copies`` feed the verdict its evidence directly; these scan whole
repositories, so the evidence, ranges, families and verdict are exercised together as a user
meets them: verbatim copies behind long docstrings or spread over several subclasses and programs
are copies, per-primitive-type variants in Java are not, and a copy in three places is one finding.
"""

from __future__ import annotations

import pathlib

from scan_samples import ORIGINAL, UNRELATED, find_all, module, renamed

from crystal_lsp.clones.findings import COPY, Finding


def paths(finding: Finding) -> list[str]:
    return sorted(loc.path for loc in finding.locations)


def copies(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == COPY]


LONG_DOC = (
    '"""'
    + "\n".join(
        f"Line {i} of a long module documentation: what the orders report is, who reads it."
        for i in range(24)
    )
    + '\n"""\n\n'
)


def test_identical_modules_opening_with_long_docstrings_are_copies(
    tmp_path: pathlib.Path,
) -> None:
    """Byte-identical modules whose first half is documentation are copies, not declarations."""
    text = LONG_DOC + module(ORIGINAL, UNRELATED[0])
    found = find_all(tmp_path / "repo", {"reports/orders.py": text, "legacy/orders.py": text})
    assert [paths(f) for f in copies(found)] == [["legacy/orders.py", "reports/orders.py"]]


PLATFORM = '''class {name}Backend(Backend):
    """The {name} backend."""

    platform = "{key}"

{body}'''


def _method(source: str) -> str:
    return "".join(f"    {line}" if line.strip() else line for line in source.splitlines(True))


def test_methods_pasted_across_five_subclasses_are_one_copy(tmp_path: pathlib.Path) -> None:
    """The same method pasted into five platform subclasses is one copy listing each once."""
    body = _method(ORIGINAL.replace("(orders,", "(self, orders,"))
    files = {
        f"backends/{key}.py": module(PLATFORM.format(name=key.title(), key=key, body=body))
        for key in ("linux", "darwin", "windows", "freebsd", "solaris")
    }
    files["backends/base.py"] = module(UNRELATED[0])
    found = find_all(tmp_path / "repo", files)
    (copy,) = copies(found)
    assert paths(copy) == sorted(p for p in files if p != "backends/base.py")


def test_a_helper_pasted_into_three_programs_is_one_copy(tmp_path: pathlib.Path) -> None:
    files = {
        "tools/export.py": module(ORIGINAL, UNRELATED[0]),
        "tools/audit.py": module(UNRELATED[1], ORIGINAL),
        "tools/digest.py": module(renamed(), UNRELATED[2]),
    }
    found = find_all(tmp_path / "repo", files)
    (copy,) = copies(found)
    assert paths(copy) == sorted(files)
    assert all(paths(f) != ["tools/audit.py", "tools/export.py"] for f in found if f is not copy)


JAVA_SUM = """    public static {t} sum({t}[] values, int from, int to) {{
        checkRange(values.length, from, to);
        {t} total = 0;
        for (int i = from; i < to; i++) {{
            if (values[i] > 0) {{
                total += values[i];
            }}
        }}
        return total;
    }}

    public static {t} max({t}[] values, int from, int to) {{
        checkRange(values.length, from, to);
        {t} best = values[from];
        for (int i = from + 1; i < to; i++) {{
            if (values[i] > best) {{
                best = values[i];
            }}
        }}
        return best;
    }}
"""


def test_per_primitive_type_variants_in_java_are_no_copies(tmp_path: pathlib.Path) -> None:
    """Methods written once per primitive type (the language cannot share them) are no copy."""
    body = "\n".join(JAVA_SUM.format(t=t) for t in ("int", "long", "double", "float"))
    java = f"package util;\n\npublic final class Numbers {{\n\n{body}}}\n"
    found = find_all(tmp_path / "repo", {"src/util/Numbers.java": java})
    assert found, "the variants are similar code: reported, below the copies"
    assert copies(found) == []
    assert any("type" in " ".join(f.evidence) for f in found)

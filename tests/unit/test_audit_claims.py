"""The claims audit (``bench/audit_claims.py``) reads code lines and unit names as the text has them.

Each of these once made the audit call a true claim false: a Rust attribute, a C preprocessor
line or a JavaScript private field read as a ``#`` comment; a ``/* ... */`` after code kept as
code; a PHP ``$name`` or ``\\Name`` never found as a word; a unit's name looked for in the
documentation above it rather than in its signature; a callback named after its call.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

from bench_scripts import load

REPO = Path(__file__).resolve().parents[2]


def audit() -> ModuleType:
    return load("audit_claims.py", "audit_claims")


def test_hash_lines_are_comments_only_where_the_language_says_so() -> None:
    a = audit()
    assert a.code(['#[cfg(feature = "std")]', "fn f() {"], "rust") == [
        '#[cfg(feature = "std")]',
        "fn f() {",
    ]
    assert a.code(["#include <stdio.h>", "#define N 4"], "c") == [
        "#include <stdio.h>",
        "#define N 4",
    ]
    assert a.code(["#count = 0;"], "javascript") == ["#count = 0;"]
    assert a.code(["# a comment", "x = 1"], "python") == ["x = 1"]
    assert a.code(["#[Route('/')]", "# note"], "php") == ["#[Route('/')]"]


def test_a_block_comment_after_code_is_no_part_of_the_line() -> None:
    a = audit()
    assert a.code(["    return -1; /* end of file */", "/* alone */", " * middle"], "c") == [
        "return -1;"
    ]
    cast = "\t\t/** @type {number} */ (graph.index(a)),"
    assert a.code([cast], "javascript") == ["(graph.index(a)),"]


def test_names_with_sigils_are_found_as_words() -> None:
    a = audit()
    assert re.search(a.word("$aliases"), "foreach ($aliases as $alias) {")
    assert not re.search(a.word("$alias"), "foreach ($aliases as $x) {")
    assert re.search(a.word("\\Throwable"), "function f(\\Throwable $error)")


def test_a_unit_name_is_looked_for_after_the_documentation_above_it(tmp_path: Path) -> None:
    a = audit()
    docs = ["/// Parses a string as bytes.", "///"] + ["/// more"] * 10
    source = [*docs, "#[inline]", "fn deserialize_bytes<V>(self, visitor: V) {", "}"]
    php = ["/**", " * Finds a namespace.", " *", " * @return string", " */"]
    php += ["public function findNamespace(string $namespace)", "{", "}"]
    (tmp_path / "de.rs").write_text("\n".join(source) + "\n")
    (tmp_path / "A.php").write_text("\n".join(php) + "\n")
    unit = {"kind": "function", "start": {"line": 1}, "language": "rust"}
    assert a._unit(tmp_path, {**unit, "path": "de.rs", "name": "deserialize_bytes"}) == ""
    assert a._unit(tmp_path, {**unit, "path": "de.rs", "name": "serialize_bytes"}) != ""
    php_unit = {**unit, "path": "A.php", "name": "findNamespace", "language": "php"}
    assert a._unit(tmp_path, php_unit) == ""


def test_a_callback_is_looked_for_by_the_name_of_its_call(tmp_path: Path) -> None:
    a = audit()
    (tmp_path / "a.js").write_text("items.forEach(function (item) {\n  use(item);\n});\n")
    loc = {"kind": "function", "path": "a.js", "start": {"line": 1}, "language": "javascript"}
    assert a._unit(tmp_path, {**loc, "name": "forEach callback in main"}) == ""
    assert a._unit(tmp_path, {**loc, "name": "map callback in main"}) != ""


def test_the_counts_a_description_states_are_checked() -> None:
    a = audit()
    locations = [{"path": "a.c"}, {"path": "a.c"}, {"path": "b.c"}]
    pairs = [{"a": 0, "b": 1, "copied": 46}, {"a": 0, "b": 2, "copied": 80}]
    doc = {"locations": locations, "pairs": pairs, "evidence": []}
    short = "a short repeat (46 copied tokens, under 50)"
    assert a._phrases({**doc, "evidence": [short]}, [0, 1]) == ""
    assert a._phrases({**doc, "evidence": [short]}, [0, 2]) != ""  # the best pair copies 80
    family = "family of parallel units: 3 members in 2 files"
    assert a._phrases({**doc, "evidence": [family]}, [0, 1]) == ""
    assert a._phrases({**doc, "evidence": [family.replace("3 members", "4 members")]}, [0, 1])


def test_the_printed_renaming_is_the_facts_one() -> None:
    a = audit()
    facts = {"renaming": [["total", "sum"], ["items", "rows"], [".size", ".length"]]}
    doc = {"evidence": ["names changed one-to-one: items->rows, total->sum (+1)"]}
    text_a, text_b = "total = items.size", "sum = rows.length"
    assert a._renaming(doc, facts, text_a, text_b) == ""
    edited = {"evidence": ["names changed one-to-one but on 1 edited line: items->rows (+2)"]}
    assert a._renaming(edited, facts, text_a, text_b) == ""
    wrong = {"evidence": ["names changed one-to-one: items->sum (+2)"]}
    assert a._renaming(wrong, facts, text_a, text_b) != ""

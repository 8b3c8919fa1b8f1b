"""Incremental re-tokenization gives exactly the entry a full tokenization gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.text.entries import Entry, build_entry
from crystal_lsp.text.incremental import IncrementalEntry, full_scan, supports_incremental
from crystal_lsp.text.lexers import resolve_lexer
from crystal_lsp.text.lexinput import lex_input, unify_line_ends
from crystal_lsp.text.tokens import lex

PYTHON = '''#!/usr/bin/env python3
"""Module docstring with 'quotes' and "more"."""
import os
from typing import Any


@decorator(1)
def first(values, key=None):
    """Sum the values.

    A second paragraph.
    """
    total = 0
    for value in values:
        if key is not None:
            value = key(value)
        total += value  # crystal: ignore
    return f"{total!r:>10} items {len(values)}"


class Thing(Base):
    name = 'thing'

    def method(self, other):
        result = []
        for item in other:
            result.append(item * 2 + self.offset)
            if item > 10:
                break
        return result

    async def later(self):
        await self.method([1, 2, 3])
        return b"bytes\\n" + rb'raw'


def second(values, key=None):
    total = 0
    for value in values:
        if key is not None:
            value = key(value)
        total += value
    return total
'''

JAVA = """package demo;

import java.util.List;

/** Javadoc. */
public class Demo {
    private int count = 0;

    public int sum(List<Integer> xs) {
        int total = 0;
        for (int x : xs) {
            total += x; // comment
        }
        String s = "a \\"quoted\\" string";
        return total + s.length();
    }

    /* block
       comment */
    public int twice(List<Integer> xs) {
        int total = 0;
        for (int x : xs) {
            total += x * 2;
        }
        return total;
    }
}
"""

JAVASCRIPT = """const re = /ab+c/g;
function add(a, b) {
  const text = `template ${a + b} done`;
  return a + b + text.length;
}

class Box {
  constructor(items) {
    this.items = items.map((x) => x * 2);
  }
  total() {
    let t = 0;
    for (const x of this.items) { t += x; }
    return t;
  }
}
"""

C_CODE = """#include <stdio.h>

struct node { int value; struct node *next; };

int walk(struct node *p) {
    int total = 0;
    while (p) {
        total += p->value;
        p = p->next;
    }
    return total;
}

int sum(int *xs, int n) {
    int total = 0;
    for (int i = 0; i < n; i++) {
        total += xs[i];
    }
    return total;
}

int main(void) {
    int xs[] = {1, 2, 3};
    printf("%d\\n", sum(xs, 3));
    return 0;
}
"""

SAMPLES = {
    "m.py": PYTHON,
    "Demo.java": JAVA,
    "app.js": JAVASCRIPT,
    "prog.c": C_CODE,
    # what Pygments changes before lexing: CRLF, a byte-order mark, no final line end
    "crlf.py": PYTHON.replace("\n", "\r\n"),
    "Bom.java": "\ufeff" + JAVA.rstrip("\n"),
    "mixed.js": "\n\n" + JAVASCRIPT.replace("\n", "\r\n", 5) + "\n\n",
}
FRAGMENTS = [
    '"',
    "'",
    '"""',
    "'''",
    "\n",
    "\n\n",
    "    ",
    "\t",
    "{",
    "}",
    "(",
    ")",
    "[",
    "#",
    "//",
    "/*",
    "*/",
    "`",
    "\\",
    "def f(x):\n    return x\n",
    "x = 1\n",
    "crystal: ignore",
    "\r\n",
    "\r",
    "\f",
    "\ufeff",
    "é",
    "😀",
    "abc",
    "for (;;) {",
    "@",
    "->",
    "::",
    "-",
    ">",
    ".",
]


def _json(entry: Entry) -> tuple[object, object]:
    assert entry.heavy is not None
    return entry.light_json(), entry.heavy.to_json()


def _full(path: str, source: str) -> Entry:
    return build_entry(path, source, None, min_tokens=12, min_lines=3)


def _edit(source: str, position: int, delete: int, insert: str) -> str:
    position = min(position, len(source))
    return source[:position] + insert + source[position + delete :]


edits = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=2000),
        st.integers(min_value=0, max_value=30),
        st.lists(st.sampled_from(FRAGMENTS), max_size=3).map("".join),
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.parametrize("path", sorted(SAMPLES))
@settings(max_examples=40)
@given(changes=edits)
def test_updates_equal_full_tokenization(path: str, changes: list[tuple[int, int, str]]) -> None:
    source = SAMPLES[path]
    current = IncrementalEntry(path, source, None, min_tokens=12, min_lines=3)
    assert _json(current.entry) == _json(_full(path, source))
    for position, delete, insert in changes:
        source = _edit(source, position, delete, insert)
        current = current.update(source)
        assert current.source == unify_line_ends(source)  # LSP line ends (issue 33)
        assert _json(current.entry) == _json(_full(path, source))
        if supports_incremental(current.lexer):
            # the checkpoints an update keeps are those a fresh lexing would record
            fresh = full_scan(current.lexer, lex_input(source).text)[3]
            assert current.checkpoints == fresh


@settings(max_examples=25)
@given(text=st.text(max_size=300))
def test_arbitrary_text_and_edits(text: str) -> None:
    source = PYTHON[:400]
    current = IncrementalEntry("x.py", source, None, min_tokens=12, min_lines=3)
    for cut in (len(source) // 3, 0, len(source)):
        source = source[:cut] + text + source[cut:]
        current = current.update(source)
        assert _json(current.entry) == _json(_full("x.py", source))


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_scanner_matches_pygments(path: str) -> None:
    lexer = resolve_lexer(None, path, SAMPLES[path], guess=False)
    if not supports_incremental(lexer):
        pytest.skip("lexer overrides get_tokens_unprocessed")
    prepared = lex_input(SAMPLES[path])
    texts, starts, types, checkpoints = full_scan(lexer, prepared.text)
    tokens = lex(SAMPLES[path], lexer)
    assert (texts, prepared.raw_starts(starts), types) == (
        tokens.texts,
        tokens.starts,
        tokens.types,
    )
    assert checkpoints.offsets[0] == 0 and checkpoints.kept[0] == 0
    assert checkpoints.offsets == sorted(set(checkpoints.offsets))


def test_which_lexers_restart() -> None:
    assert supports_incremental(resolve_lexer("python"))
    assert supports_incremental(resolve_lexer("java"))
    assert not supports_incremental(resolve_lexer("c"))  # CFamilyLexer post-processes names


def test_local_edit_relexes_a_small_region_and_keeps_untouched_snippets() -> None:
    source = "\n\n".join(PYTHON for _ in range(20))
    current = IncrementalEntry("big.py", source, None, min_tokens=12, min_lines=3)
    where = source.index("result.append", len(source) // 2)
    updated = current.update(source[:where] + "extra_" + source[where:])
    assert updated.relexed < len(source) // 20
    assert _json(updated.entry) == _json(_full("big.py", updated.source))
    # digests of untouched snippets are carried over, not recomputed
    old_digests = {id(meta.norm_sha) for meta in current.entry.snippets}
    reused = sum(1 for meta in updated.entry.snippets if id(meta.norm_sha) in old_digests)
    assert reused >= len(updated.entry.snippets) - 4


def test_unchanged_text_returns_the_same_object() -> None:
    current = IncrementalEntry("x.py", PYTHON, None, min_tokens=12, min_lines=3)
    assert current.update(PYTHON) is current


def test_language_change_rebuilds() -> None:
    current = IncrementalEntry(
        "script", "#!/usr/bin/env python\nx = 1\n", None, min_tokens=1, min_lines=1
    )
    assert current.entry.language == "python"
    source = "#!/bin/bash\necho hi\n"
    updated = current.update(source)
    assert updated.entry.language == "bash"
    assert _json(updated.entry) == _json(
        build_entry("script", source, None, min_tokens=1, min_lines=1)
    )

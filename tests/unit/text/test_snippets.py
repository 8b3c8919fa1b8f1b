"""Snippet extraction: units by indentation and by braces, statement runs, broken code, sizes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crystal_lsp.text.snippets import (
    ANONYMOUS,
    CLASS,
    DATA,
    FUNCTION,
    IMPORTS,
    MAX_RUN_LINES,
    NAMESPACE,
    STATEMENTS,
    Snippet,
    extract,
    line_starts,
    token_lines,
)
from crystal_lsp.text.tokens import tokenize
from crystal_lsp.text.views import categories

Unit = tuple[str, str, int, int, int]  # kind, name, depth, first line, last line (1-based)


def snippets(source: str, language: str, **sizes: int) -> list[Snippet]:
    tokens = tokenize(source, language)
    cats = categories(tokens.texts, tokens.types)
    lines = token_lines(tokens.starts, source)
    sizes.setdefault("min_tokens", 1)
    sizes.setdefault("min_lines", 1)
    return extract(tokens.texts, cats, lines, source, language, **sizes)


def units(source: str, language: str, **sizes: int) -> list[Unit]:
    return [
        (s.kind, s.name, s.depth, s.first_line + 1, s.last_line + 1)
        for s in snippets(source, language, **sizes)
    ]


# --- helpers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "starts", "expected"),
    [
        pytest.param("a b\nc\n\nd", [0, 2, 4, 7], [0, 0, 1, 3], id="blank-line"),
        pytest.param("x", [0], [0], id="one-line"),
        pytest.param("\n\nx", [2], [2], id="leading-newlines"),
        pytest.param("ab", [], [], id="no-tokens"),
    ],
)
def test_token_lines(source: str, starts: list[int], expected: list[int]) -> None:
    assert token_lines(starts, source) == expected


def test_line_starts() -> None:
    assert line_starts("ab\ncd\n\ne") == [0, 3, 6, 7]
    assert line_starts("") == [0]


def test_snippet_properties() -> None:
    s = Snippet(3, 10, FUNCTION, "f", 0, 4, 8)
    assert (s.tokens, s.lines) == (7, 5)


# --- Python and other indentation languages --------------------------------------------------

PYTHON = '''"""Module docstring."""

import os
import sys
from typing import Any

__all__ = [
    "alpha",
    "beta",
    "gamma",
]

LIMIT = 10
total = compute(LIMIT)


@decorator
@other(1, 2)
def alpha(x):
    def inner(y):
        return y + 1
    return inner(x)


class Beta(Base):
    @property
    def value(self):
        return self._v

    async def fetch(self):
        await go()

    class Nested:
        def deep(self):
            pass


async def gamma():
    return 1
'''

PYTHON_UNITS: list[Unit] = [
    (DATA, "", 0, 1, 1),  # a lone docstring is a literal
    (IMPORTS, "", 0, 3, 5),
    (DATA, "", 0, 7, 11),
    (STATEMENTS, "", 0, 13, 14),
    (FUNCTION, "alpha", 0, 17, 22),
    (FUNCTION, "inner", 1, 20, 21),
    (CLASS, "Beta", 0, 25, 35),
    (FUNCTION, "value", 1, 26, 28),
    (FUNCTION, "fetch", 1, 30, 31),
    (CLASS, "Nested", 1, 33, 35),
    (FUNCTION, "deep", 2, 34, 35),
    (FUNCTION, "gamma", 0, 38, 39),
]


def test_python_units() -> None:
    assert units(PYTHON, "python") == PYTHON_UNITS


def test_python_decorators_belong_to_the_unit() -> None:
    by_name = {s.name: s for s in snippets(PYTHON, "python")}
    tokens = tokenize(PYTHON, "python")
    assert tokens.texts[by_name["alpha"].start] == "@decorator"
    assert tokens.texts[by_name["value"].start] == "@property"
    # the unit ends before the next top-level unit
    assert tokens.texts[by_name["alpha"].end] == "class"


def test_python_units_are_sorted_outer_first() -> None:
    found = snippets(PYTHON, "python")
    assert found == sorted(found, key=lambda s: (s.start, -s.end))


def test_statement_runs_split_at_blank_lines_and_classified() -> None:
    source = "import os\nimport re\n\nx = 1\ny = f(x)\n\nTABLE = (1, 2, 3, 4, 5, 6)\n"
    assert units(source, "python") == [
        (IMPORTS, "", 0, 1, 2),
        (STATEMENTS, "", 0, 4, 5),
        (DATA, "", 0, 7, 7),
    ]


def test_long_statement_runs_are_split() -> None:
    source = "".join(f"value_{i} = compute({i})\n" for i in range(MAX_RUN_LINES + 10))
    found = units(source, "python")
    assert found == [
        (STATEMENTS, "", 0, 1, MAX_RUN_LINES),
        (STATEMENTS, "", 0, MAX_RUN_LINES + 1, MAX_RUN_LINES + 10),
    ]


def test_ruby_end_terminated_units() -> None:
    source = "class Cart\n  def total(items)\n    items.sum\n  end\nend\n\nputs 1\n"
    assert units(source, "ruby") == [
        (CLASS, "Cart", 0, 1, 5),
        (FUNCTION, "total", 1, 2, 4),
        (STATEMENTS, "", 0, 7, 7),
    ]


# --- brace languages -------------------------------------------------------------------------

JAVA = """package demo;

import java.util.List;
import java.util.Map;

@Entity
public class Account extends Base implements Comparable<Account> {
    private int balance;

    @Override
    public int compareTo(Account other) {
        return Integer.compare(balance, other.balance);
    }

    public Runnable assigned() {
        Runnable task = new Runnable() {
            public void run() {
                System.out.println("run");
            }
        };
        return task;
    }

    interface Listener {
        void changed(int value);
    }
}
"""


def test_java_units() -> None:
    assert units(JAVA, "java") == [
        (IMPORTS, "", 0, 1, 1),
        (IMPORTS, "", 0, 3, 4),
        (CLASS, "Account", 0, 6, 27),
        (FUNCTION, "compareTo", 1, 10, 13),
        (FUNCTION, "assigned", 1, 15, 22),
        (CLASS, "anonymous Runnable", 2, 16, 20),  # the anonymous class
        (FUNCTION, "run", 3, 17, 19),
        (CLASS, "Listener", 1, 24, 26),
    ]


def test_java_annotations_belong_to_the_unit() -> None:
    tokens = tokenize(JAVA, "java")
    by_name = {s.name: s for s in snippets(JAVA, "java")}
    assert tokens.texts[by_name["Account"].start] == "@Entity"
    assert tokens.texts[by_name["compareTo"].start] == "@Override"


def test_java_returned_anonymous_class_is_a_unit() -> None:
    source = (
        "class Tasks {\n    Runnable make() {\n        return new Runnable() {\n"
        "            public void run() {\n                work();\n            }\n"
        "        };\n    }\n}\n"
    )
    assert (CLASS, "anonymous Runnable", 2, 3, 7) in units(source, "java")


JAVASCRIPT = """function total(items) {
  let sum = 0;
  for (const item of items) {
    sum += item.price;
  }
  return sum;
}

const twice = (x) => {
  return x * 2;
};

export const handler = async (event) => {
  return { status: 200 };
};

class Cart extends Base {
  constructor(items) {
    super();
    this.items = items;
  }
  add(item) {
    this.items.push(item);
  }
}

const config = {
  retries: 3,
  timeout: 100,
};
"""


def test_javascript_units() -> None:
    found = [u for u in units(JAVASCRIPT, "javascript", min_tokens=2)]
    assert found == [
        (FUNCTION, "total", 0, 1, 7),
        (FUNCTION, "twice", 0, 9, 11),
        (FUNCTION, "handler", 0, 13, 15),
        (CLASS, "Cart", 0, 17, 25),
        (FUNCTION, "constructor", 1, 18, 21),
        (FUNCTION, "add", 1, 22, 24),
        (DATA, "", 0, 27, 30),
    ]


def test_javascript_import_list_is_not_a_code_unit() -> None:
    names = "".join(f"  helperNumber{i},\n" for i in range(30))
    source = f'import {{\n{names}}} from "./helpers.js";\n\nrun();\n'
    kinds = {s.kind for s in snippets(source, "javascript", min_tokens=50, min_lines=5)}
    assert kinds <= {IMPORTS}


C_SOURCE = """#include <stdio.h>
#include <stdlib.h>

struct point {
    int x;
    int y;
};

static int add(int a, int b) {
    return a + b;
}

int main(int argc, char **argv) {
    printf("%d\\n", add(1, 2));
    return 0;
}
"""


def test_c_units() -> None:
    found = [u for u in units(C_SOURCE, "c") if u[0] in (FUNCTION, CLASS)]
    assert found == [
        (CLASS, "point", 0, 4, 7),
        (FUNCTION, "add", 0, 9, 11),
        (FUNCTION, "main", 0, 13, 16),
    ]


RUST = """use std::fmt;

struct Point {
    x: i32,
    y: i32,
}

impl Point {
    pub fn sum(&self) -> i32 {
        self.x + self.y
    }
}

fn main() {
    let p = Point { x: 1, y: 2 };
    println!("{}", p.sum());
}
"""


def test_rust_units() -> None:
    assert [u for u in units(RUST, "rust") if u[0] in (FUNCTION, CLASS)] == [
        (CLASS, "Point", 0, 3, 6),
        (CLASS, "Point", 0, 8, 12),
        (FUNCTION, "sum", 1, 9, 11),
        (FUNCTION, "main", 0, 14, 17),
    ]


def test_rust_fn_new_is_a_function() -> None:
    source = "impl Point {\n    fn new(x: i32) -> Self {\n        Point { x }\n    }\n}\n"
    assert (FUNCTION, "new", 1, 2, 4) in units(source, "rust")


GO = """package main

import (
\t"fmt"
)

func helper(values []int) int {
\ttotal := 0
\tfor _, v := range values {
\t\ttotal += v
\t}
\treturn total
}

func main() {
\tfmt.Println(helper([]int{1, 2}))
}
"""


def test_go_functions_after_a_function() -> None:
    assert (FUNCTION, "main", 0, 15, 17) in units(GO, "go")


def test_go_first_function_starts_at_its_own_line() -> None:
    assert (FUNCTION, "helper", 0, 7, 13) in units(GO, "go")


def test_go_method_name() -> None:
    source = "func helper() {\n}\n\nfunc (p Point) Sum() int {\n\treturn p.X + p.Y\n}\n"
    assert (FUNCTION, "Sum", 0, 4, 6) in units(source, "go")


# --- broken code -----------------------------------------------------------------------------


def test_unclosed_brace_runs_to_the_end() -> None:
    source = "class Broken {\n  void f() {\n    if (x) {\n      call((1, 2);\n  }\n"
    assert units(source, "java") == [(CLASS, "Broken", 0, 1, 5), (FUNCTION, "f", 1, 2, 5)]


def test_extra_closing_braces_are_ignored() -> None:
    source = "function f() {\n  return 1;\n}}}\nfunction g() {\n  return 2;\n}\n"
    found = [u for u in units(source, "javascript") if u[0] == FUNCTION]
    assert found == [(FUNCTION, "f", 0, 1, 3), (FUNCTION, "g", 0, 4, 6)]


def test_unbalanced_parentheses_in_python() -> None:
    source = "def f(:\n    return ((1,\n\nclass C(\n  def g(self): pass\n@@@ ### }}}\n"
    found = units(source, "python")
    assert found and found[0][:2] == (FUNCTION, "f")


def test_empty_input() -> None:
    assert extract([], "", [], "", "python") == []


FRAGMENTS = [
    "def f(x):",
    "class C:",
    "async def g():",
    "@dec",
    "    return x",
    "  ",
    "\n",
    "\n\n",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    "=>",
    "function h() ",
    "fn main() ",
    "func (r T) M() ",
    "if (a) ",
    "return new X() ",
    "import os",
    "end",
    "'str",
    '"',
    "/*",
    "*/",
    "#",
    "x = 1",
    "\t",
    "é😀",
    "\ufffd",
]


@given(
    pieces=st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=6), max_size=60),
    language=st.sampled_from(["python", "java", "javascript", "c", "go", "rust", "ruby"]),
    min_tokens=st.integers(1, 8),
    min_lines=st.integers(1, 3),
)
def test_any_text_gives_consistent_snippets(
    pieces: list[str], language: str, min_tokens: int, min_lines: int
) -> None:
    source = "".join(pieces)
    tokens = tokenize(source, language)
    cats = categories(tokens.texts, tokens.types)
    lines = token_lines(tokens.starts, source)
    found = extract(
        tokens.texts, cats, lines, source, language, min_tokens=min_tokens, min_lines=min_lines
    )
    for s in found:
        assert 0 <= s.start < s.end <= len(tokens)
        assert s.first_line == lines[s.start] and s.last_line == lines[s.end - 1]
        assert s.first_line <= s.last_line <= source.count("\n")
        assert s.tokens >= min_tokens and s.lines >= min_lines
        assert s.depth >= 0
    assert found == sorted(found, key=lambda s: (s.start, -s.end))


# --- size filters ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("min_tokens", "min_lines", "names"),
    [
        pytest.param(1, 1, ["alpha", "inner", "Beta", "value", "fetch", "Nested", "deep", "gamma"]),
        pytest.param(1, 4, ["alpha", "Beta"]),
        pytest.param(10, 1, ["alpha", "inner", "Beta", "value", "fetch", "Nested"]),
        pytest.param(11, 3, ["alpha", "Beta", "value"]),
        pytest.param(30, 1, ["Beta"]),
        pytest.param(1000, 1, []),
    ],
)
def test_size_filters(min_tokens: int, min_lines: int, names: list[str]) -> None:
    found = [
        s
        for s in snippets(PYTHON, "python", min_tokens=min_tokens, min_lines=min_lines)
        if s.kind in (FUNCTION, CLASS)
    ]
    assert [s.name for s in found] == names
    assert all(s.tokens >= min_tokens and s.lines >= min_lines for s in found)


def test_python_multiline_string_does_not_end_the_function() -> None:
    source = (
        'def query(db):\n    sql = """\nSELECT name, price\nFROM items\n"""\n'
        "    rows = db.run(sql)\n    return rows\n"
    )
    assert units(source, "python")[0] == (FUNCTION, "query", 0, 1, 7)


# --- unit names come from the enclosing definition, never from a call -------------------------

GO_TEST = """package demo

func TestLoad(t *testing.T) {
	t.Run("one", func(t *testing.T) {
		t.Logf("%v", Item{a: 1})
	})
	n := len([]int{1, 2, 3})
	go func() {
		work(n)
	}()
}
"""

CPP_HEADER = """namespace acme {
namespace {
int helper(int x) {
  return x + 1;
}
}
class EXPORT_API Widget : public Base {
 public:
  void run(int n) {
    std::sort(a.begin(), a.end(), [](int x, int y) {
      return x < y;
    });
    call(Point{1, 2});
  }
};
struct __declspec(dllexport) Holder final {
  int value;
};
}  // namespace acme
"""


@pytest.mark.parametrize(
    ("source", "language", "expected"),
    [
        pytest.param(
            GO_TEST,
            "go",
            [
                (FUNCTION, "TestLoad", 0, 3, 11),
                (FUNCTION, "Run callback", 1, 4, 6),
            ],
            id="go-calls-are-not-units",
        ),
        pytest.param(
            CPP_HEADER,
            "cpp",
            [
                (NAMESPACE, "acme", 0, 1, 19),
                (NAMESPACE, ANONYMOUS, 1, 2, 6),
                (FUNCTION, "helper", 2, 3, 5),
                (CLASS, "Widget", 1, 7, 15),
                (FUNCTION, "run", 2, 9, 14),
                (FUNCTION, "sort callback", 3, 10, 12),
                (CLASS, "Holder", 1, 16, 18),
            ],
            id="cpp-export-macros-and-namespaces",
        ),
        pytest.param(
            "impl<T: Clone> Display for Wrapper<T> {\n    fn fmt(&self) -> R {\n"
            "        items.iter().map(|x| { x + 1 });\n        Ok(())\n    }\n}\n",
            "rust",
            [
                (CLASS, "Wrapper", 0, 1, 6),
                (FUNCTION, "fmt", 1, 2, 5),
                (FUNCTION, "map callback", 2, 3, 3),
            ],
            id="rust-impl-for-and-closures",
        ),
        pytest.param(
            "class Foo extends Bar<Baz> implements Qux {\n    void run() {\n"
            "        list.forEach(x -> {\n            print(x);\n        });\n"
            "        foo(new int[] {1, 2});\n    }\n}\n",
            "java",
            [
                (CLASS, "Foo", 0, 1, 8),
                (FUNCTION, "run", 1, 2, 7),
                (FUNCTION, "forEach callback", 2, 3, 5),
            ],
            id="java-lambdas-and-array-literals",
        ),
        pytest.param(
            "<?php\nfinal class Foo extends Bar {\n    public function run($x) {\n"
            "        array_map(function ($y) { return $y; }, $x);\n    }\n}\n",
            "php",
            [
                (CLASS, "Foo", 0, 2, 6),
                # PHP's lexer joins `},` into one token: its `}` still closes the closure
                (FUNCTION, "run", 1, 3, 5),
                (FUNCTION, "array_map callback", 2, 4, 4),
            ],
            id="php-closures",
        ),
        pytest.param(
            "namespace Acme.Tools {\n    public partial class Foo<T> : IBar where T : class {\n"
            "        public void Run() {\n            items.ForEach(x => { Log(x); });\n"
            "        }\n    }\n}\n",
            "csharp",
            [
                (NAMESPACE, "Acme.Tools", 0, 1, 7),
                (CLASS, "Foo", 1, 2, 6),
                (FUNCTION, "Run", 2, 3, 5),
                (FUNCTION, "ForEach callback", 3, 4, 4),
            ],
            id="csharp-namespaces",
        ),
        pytest.param(
            "class Foo<P> extends Base<P> {\n  render(): E {\n"
            "    return items.map((x: number) => {\n      return x;\n    });\n  }\n}\n"
            "const handler = useCallback((e) => {\n  go(e);\n}, []);\n",
            "typescript",
            [
                (CLASS, "Foo", 0, 1, 7),
                (FUNCTION, "render", 1, 2, 6),
                (FUNCTION, "map callback", 2, 3, 5),
                (FUNCTION, "handler", 0, 8, 10),
            ],
            id="typescript-returned-callbacks",
        ),
        pytest.param(
            "module Acme\n  class Foo < Bar\n    def self.build(x)\n      x\n    end\n  end\nend\n",
            "ruby",
            [(CLASS, "Acme", 0, 1, 7), (CLASS, "Foo", 1, 2, 6), (FUNCTION, "build", 2, 3, 5)],
            id="ruby-class-methods",
        ),
    ],
)
def test_unit_names_come_from_definitions(source: str, language: str, expected: list[Unit]) -> None:
    named = [u for u in units(source, language) if u[0] in (FUNCTION, CLASS, NAMESPACE)]
    assert named == expected

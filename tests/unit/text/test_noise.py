"""Noise ranges: code that repeats by convention (signatures, overloads, imports, tables...).

Each test lexes a small realistic file and looks at the noise kinds of its lines: a line maps to
the kinds of the tokens that start on it (``""`` for a token outside every noise range).
"""

from __future__ import annotations

import pytest
from scan_samples import ALL_LIST, IMPORTS, ORIGINAL, UNRELATED, module

from crystal_lsp.text.entries import Entry, build_entry
from crystal_lsp.text.noise import (
    DATA,
    DECLARATION,
    DECORATOR,
    EXPORT,
    IMPORT,
    KINDS,
    OVERLOAD,
    SIGNATURE,
    noise_ranges,
)

NONE = ""


def entry(source: str, path: str) -> Entry:
    return build_entry(path, source, None, min_tokens=5, min_lines=1)


def line_kinds(source: str, path: str) -> dict[int, set[str]]:
    """1-based line -> the noise kinds of the tokens starting on it (``""``: no noise)."""
    built = entry(source, path)
    assert built.heavy is not None
    owner = [NONE] * built.token_count
    for start, end, kind in built.noise:
        owner[start:end] = [kind] * (end - start)
    out: dict[int, set[str]] = {}
    for token, line in enumerate(built.heavy.lines):
        out.setdefault(line + 1, set()).add(owner[token])
    return out


def kinds_of(source: str, path: str, first: int, last: int) -> set[str]:
    """The kinds of every token on lines ``first..last`` (1-based, inclusive)."""
    found = line_kinds(source, path)
    return set().union(*(found.get(n, set()) for n in range(first, last + 1)))


# --- overloads -------------------------------------------------------------------------------

PY_OVERLOADS = """import typing
from typing import overload


@typing.overload
def parse(value: int) -> int: ...
@typing.overload
def parse(value: str) -> str:
    ...
@overload
def parse(value: bytes) -> bytes: ...
def parse(value):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return value
"""


def test_python_overload_stubs_are_overload_and_the_implementation_is_not() -> None:
    kinds = line_kinds(PY_OVERLOADS, "parse.py")
    # every stub, its decorator, signature and `...` body, for both spellings of the decorator
    for line in range(5, 12):
        assert kinds[line] == {OVERLOAD}, line
    assert kinds[12] == {SIGNATURE}  # the implementation's header is a signature...
    for line in range(13, 16):
        assert kinds[line] == {NONE}, line  # ...and its body is code


TS_OVERLOADS = """export function format(value: number): string;
export function format(value: Date): string;
export function format(value: number | Date): string {
  if (typeof value === "number") {
    return value.toFixed(2);
  }
  return value.toISOString();
}
"""


def test_typescript_overload_list_is_overload_and_the_implementation_a_signature() -> None:
    kinds = line_kinds(TS_OVERLOADS, "format.ts")
    assert kinds[1] == kinds[2] == {OVERLOAD}
    assert kinds[3] == {SIGNATURE}
    for line in range(4, 9):
        assert kinds[line] == {NONE}, line


def test_c_prototypes_are_overload() -> None:
    source = "double mean(double *xs, int n);\nint count(void);\nint main(void) {\n  return 0;\n}\n"
    kinds = line_kinds(source, "stats.c")
    assert kinds[1] == kinds[2] == {OVERLOAD}
    assert kinds[3] == {SIGNATURE} and kinds[4] == {NONE}


def test_interface_and_abstract_methods_are_overload() -> None:
    source = (
        "abstract class Shape {\n  abstract area(): number;\n"
        "  abstract scale(factor: number): Shape;\n}\n"
    )
    kinds = line_kinds(source, "shape.ts")
    assert kinds[2] == kinds[3] == {OVERLOAD}


def test_a_call_statement_is_not_an_overload() -> None:
    source = "function run(items) {\n  process(items);\n  console.log(items.length);\n}\n"
    kinds = line_kinds(source, "run.ts")
    assert kinds[2] == kinds[3] == {NONE}


# --- decorators ------------------------------------------------------------------------------

PARAMETRIZED = """import pytest


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a", 1),
        ("bb", 2),
        ("ccc", 3),
        ("dddd", 4),
    ],
)
def test_length(text, expected):
    assert len(text) == expected
"""


def test_parametrize_table_is_one_decorator() -> None:
    kinds = line_kinds(PARAMETRIZED, "test_length.py")
    # the table rows are literal lines too, but the decorator names them (priority order)
    for line in range(4, 13):
        assert kinds[line] == {DECORATOR}, line
    assert kinds[13] == {SIGNATURE}
    assert kinds[14] == {NONE}


def test_simple_decorators() -> None:
    source = "@property\ndef name(self):\n    return self._name\n"
    kinds = line_kinds(source, "m.py")
    assert (kinds[1], kinds[2], kinds[3]) == ({DECORATOR}, {SIGNATURE}, {NONE})


# --- data ------------------------------------------------------------------------------------

THREE_ROWS = """def before(x):
    return x * 2


COLORS = {
    "red": 1,
    "green": 2,
    "blue": 3,
}


def after(x):
    return x + 1
"""

TWO_ROWS = """def before(x):
    return x * 2


PAIR = {
    "left": 1,
    "right": 2,
}


def after(x):
    return x + 1
"""


def test_three_literal_lines_are_data() -> None:
    kinds = line_kinds(THREE_ROWS, "colors.py")
    for line in range(5, 10):  # the rows and the brackets around them
        assert kinds[line] == {DATA}, line
    assert kinds[2] == kinds[13] == {NONE}


def test_two_literal_lines_are_not_data() -> None:
    kinds = line_kinds(TWO_ROWS, "pair.py")
    assert kinds_of(TWO_ROWS, "pair.py", 5, 8) == {NONE}
    assert kinds[1] == {SIGNATURE}


def test_constant_table_in_javascript_is_data() -> None:
    source = (
        "const LIMITS = {\n  small: 10,\n  medium: 100,\n  large: 1000,\n  huge: 10000,\n};\n"
        "function limit(size) {\n  return LIMITS[size] || 0;\n}\n"
    )
    kinds = line_kinds(source, "limits.js")
    for line in range(2, 6):
        assert kinds[line] == {DATA}, line
    assert kinds[8] == {NONE}


def test_lines_of_code_are_not_data() -> None:
    source = module(ORIGINAL)
    assert DATA not in kinds_of(source, "orders.py", 1, ORIGINAL.count("\n"))


# --- exports and imports ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "path"),
    [
        pytest.param(
            "module.exports = {\n  parse,\n  format,\n  render,\n};\n", "a.js", id="module.exports"
        ),
        pytest.param("export { parse, format };\n", "b.js", id="export-list"),
        pytest.param("export default { parse, format };\n", "c.js", id="export-default"),
        pytest.param('__all__ = [\n    "parse",\n    "format",\n]\n', "d.py", id="__all__"),
        pytest.param('__all__ += ["render"]\n', "e.py", id="__all__+="),
    ],
)
def test_export_lists(source: str, path: str) -> None:
    lines = source.count("\n")
    assert kinds_of(source, path, 1, lines) == {EXPORT}


@pytest.mark.parametrize(
    ("source", "path"),
    [
        pytest.param("import os\nimport sys\n", "a.py", id="import"),
        pytest.param(
            "from collections import (\n    OrderedDict,\n    defaultdict)\n",
            "b.py",
            id="from-import-parenthesized",
        ),
        pytest.param("from x import (a,\n b)\n", "c.py", id="from-import-two-lines"),
        pytest.param('export * from "./x";\n', "d.js", id="export-star-from"),
        pytest.param('export { a, b } from "./ab";\n', "e.js", id="export-from"),
        pytest.param('const x = require("x");\n', "f.js", id="require"),
        pytest.param('import { readFile } from "fs";\n', "g.ts", id="es-import"),
    ],
)
def test_imports(source: str, path: str) -> None:
    lines = source.count("\n")
    assert kinds_of(source, path, 1, lines) == {IMPORT}


def test_an_import_block_before_code() -> None:
    source = module(IMPORTS, UNRELATED[0])
    imports = IMPORTS.count("\n")
    assert kinds_of(source, "m.py", 1, imports) == {IMPORT}
    assert IMPORT not in kinds_of(source, "m.py", imports + 1, source.count("\n"))


def test_all_list_sample_is_an_export() -> None:
    assert kinds_of(ALL_LIST, "m.py", 1, ALL_LIST.count("\n")) == {EXPORT}


# --- foreign declarations --------------------------------------------------------------------

CTYPES = """import ctypes

lib = ctypes.CDLL("libm.so.6")
lib.frexp.argtypes = [ctypes.c_double, ctypes.POINTER(ctypes.c_int)]
lib.frexp.restype = ctypes.c_double
lib.check.errcheck = raise_on_error


def frexp(x):
    exponent = ctypes.c_int()
    return lib.frexp(x, ctypes.byref(exponent)), exponent.value
"""


def test_ctypes_declarations() -> None:
    kinds = line_kinds(CTYPES, "m.py")
    assert kinds[4] == kinds[5] == kinds[6] == {DECLARATION}
    assert kinds[3] == {NONE}  # loading the library is code
    assert kinds[9] == {SIGNATURE} and kinds[10] == kinds[11] == {NONE}


# --- signatures ------------------------------------------------------------------------------


def test_python_def_headers_are_signatures() -> None:
    source = (
        "async def fetch(\n    url: str,\n    timeout: float = 1.0,\n) -> bytes:\n"
        "    return await get(url, timeout)\n\n\n"
        "def plain(a, b):\n    return a + b\n"
    )
    kinds = line_kinds(source, "m.py")
    for line in (1, 2, 3, 4, 8):
        assert kinds[line] == {SIGNATURE}, line
    assert kinds[5] == kinds[9] == {NONE}


JS_CODE = """function total(items, rate) {
  let sum = 0;
  if (items.length > 0) {
    for (const item of items) {
      sum += item.price;
    }
  } else if (rate) {
    sum = rate;
  }
  while (sum > 100) {
    sum -= 1;
  }
  const options = {
    key: {
      value: sum,
    },
  };
  return options;
}

class Cart {
  add(item) {
    this.items.push(item);
  }

  static empty() {
    return new Cart();
  }
}

async function load(url) {
  return fetch(url);
}
"""


def test_javascript_function_headers_are_signatures() -> None:
    kinds = line_kinds(JS_CODE, "cart.js")
    for line in (1, 22, 26, 31):
        assert kinds[line] == {SIGNATURE}, line


def test_control_statements_and_object_literals_are_not_signatures() -> None:
    kinds = line_kinds(JS_CODE, "cart.js")
    for line in (3, 4, 7, 10, 13, 14):  # if, for, else if, while, `x = {`, `key: {`
        assert kinds[line] == {NONE}, line


def test_typescript_headers_with_return_types_are_signatures() -> None:
    source = (
        "export async function load(url: string): Promise<Map<string, number> > {\n"
        "  const response = await fetch(url);\n  return parse(response);\n}\n"
        "if (ready(x)) {\n  start();\n}\n"
    )
    kinds = line_kinds(source, "load.ts")
    assert kinds[1] == {SIGNATURE}
    assert kinds[2] == kinds[3] == kinds[5] == {NONE}


def test_typescript_header_with_a_nested_generic_return_type_is_a_signature() -> None:
    source = (
        "export async function load(url: string): Promise<Map<string, number>> {\n"
        "  return parse(await fetch(url));\n}\n"
    )
    assert line_kinds(source, "load.ts")[1] == {SIGNATURE}


# --- the ranges themselves -------------------------------------------------------------------

SAMPLES = [
    (PY_OVERLOADS, "parse.py"),
    (TS_OVERLOADS, "format.ts"),
    (PARAMETRIZED, "test_length.py"),
    (THREE_ROWS, "colors.py"),
    (CTYPES, "m.py"),
    (JS_CODE, "cart.js"),
    (module(IMPORTS, ALL_LIST, ORIGINAL, *UNRELATED), "big.py"),
]


@pytest.mark.parametrize(("source", "path"), SAMPLES, ids=[p for _, p in SAMPLES])
def test_ranges_are_sorted_non_overlapping_and_of_known_kinds(source: str, path: str) -> None:
    built = entry(source, path)
    assert built.noise
    previous_end = 0
    for start, end, kind in built.noise:
        assert previous_end <= start < end <= built.token_count
        assert kind in KINDS
        previous_end = end


def test_adjacent_ranges_of_one_kind_are_merged() -> None:
    built = entry("import os\nimport sys\nfrom x import y\n", "m.py")
    assert built.noise == [(0, built.token_count, IMPORT)]


def test_no_tokens_no_noise() -> None:
    assert noise_ranges([], "", [], [], "python") == []

"""Unit tests of :mod:`crystal_lsp.clones.reports.renames`."""

from __future__ import annotations

from difflib import unified_diff

from crystal_lsp.clones.reports.renames import Tokens, mapped_back, renaming
from crystal_lsp.text.entries import lex_file

ORIGINAL = '''\
def order_total(items, tax_rate):
    """Sum the items, then tax."""
    subtotal = 0
    for item in items:
        subtotal += item.price * item.count
    return subtotal * (1 + tax_rate)
'''
COPY = '''\
def period_revenue(sales, vat):
    """Revenue of a period, plus VAT."""
    running = 0
    for sale in sales:
        running += sale.price * sale.count * 2
    return running * (1 + vat)
'''


def _tokens(text: str) -> Tokens:
    _, heavy = lex_file("x.py", text, None)
    return Tokens(heavy.texts, heavy.cats, heavy.starts, heavy.lines)


def test_the_renaming_of_a_copy_in_the_originals_order() -> None:
    assert renaming(_tokens(ORIGINAL), _tokens(COPY)) == [
        ("order_total", "period_revenue"),
        ("items", "sales"),
        ("tax_rate", "vat"),
        ("subtotal", "running"),
        ("item", "sale"),
    ]


def test_the_copy_mapped_back_differs_only_where_the_code_does() -> None:
    pairs = renaming(_tokens(ORIGINAL), _tokens(COPY))
    mapped = mapped_back(COPY, _tokens(COPY), pairs)
    changed = [
        line
        for line in unified_diff(ORIGINAL.splitlines(), mapped.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    # the docstring (prose, not names) and the real change (`* 2`) remain; the names do not
    assert changed == [
        '-    """Sum the items, then tax."""',
        '+    """Revenue of a period, plus VAT."""',
        "-        subtotal += item.price * item.count",
        "+        subtotal += item.price * item.count * 2",
    ]


def test_members_builtins_and_identical_names_are_not_renamed() -> None:
    original = "def f(xs):\n    return len(xs.keys()) + len(xs)\n"
    copy = "def f(ys):\n    return max(ys.values()) + max(ys)\n"
    # `len` -> `max` (builtins) and `keys` -> `values` (members) change what the code calls
    assert renaming(_tokens(original), _tokens(copy)) == [("xs", "ys")]


def test_a_name_the_copy_also_uses_otherwise_is_not_mapped_onto() -> None:
    original = "def f(a, b):\n    a = a + b\n    a = a * b\n    return a\n"
    copy = "def f(c, a):\n    c = c + a\n    c = c * a\n    return c\n"
    # a -> c and b -> a: mapping both back at once keeps the two names apart
    pairs = renaming(_tokens(original), _tokens(copy))
    assert pairs == [("a", "c"), ("b", "a")]
    assert mapped_back(copy, _tokens(copy), pairs) == original
    # the copy keeps a name `a` of its own (not a renamed one): mapping `c` back to `a` would
    # make the two read alike, so only `d` -> `b` is shown
    clash = "def f(c, a):\n    c = c + d\n    c = c * d\n    return c + a\n"
    assert renaming(_tokens(original), _tokens(clash)) == [("b", "d")]


def test_no_renaming_between_unrelated_code() -> None:
    assert renaming(_tokens(ORIGINAL), _tokens("import os\n")) == []
    assert mapped_back("x = 1\n", _tokens("x = 1\n"), []) == "x = 1\n"

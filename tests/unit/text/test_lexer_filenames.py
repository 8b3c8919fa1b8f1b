"""The file-name lookup by suffix rates lexers exactly as matching every pattern does."""

from __future__ import annotations

import fnmatch

from hypothesis import given
from hypothesis import strategies as st
from pygments.lexers import find_lexer_class
from pygments.lexers._mapping import LEXERS

from crystal_lsp.text.lexers import _builtin_lexer_for_filename

PATTERNS = sorted({p for _m, _n, _a, filenames, _ in LEXERS.values() for p in filenames})


def _every_pattern(basename: str) -> str | None:
    """The lookup as it was: ``fnmatchcase`` against every pattern of every lexer."""
    best: tuple[float, str, str] | None = None
    for _module, name, aliases, filenames, _ in LEXERS.values():
        for pattern in filenames:
            if fnmatch.fnmatchcase(basename, pattern) and aliases:
                priority = float(getattr(find_lexer_class(name), "priority", 0) or 0)
                rating = (priority + (0.5 if "*" not in pattern else 0.0), name, aliases[0])
                if best is None or rating[:2] > best[:2]:
                    best = rating
    return best[2] if best is not None else None


NAMES = st.one_of(
    st.sampled_from(PATTERNS).map(lambda p: p.replace("*", "x").replace("?", "y")),
    st.tuples(st.text("ab.xX_", max_size=6), st.sampled_from(PATTERNS)).map(
        lambda t: t[0] + t[1].replace("*", "").replace("[", "").replace("]", "")
    ),
    st.text("abc.hpyPY_-", max_size=12),
)


@given(name=NAMES)
def test_suffix_lookup_equals_matching_every_pattern(name: str) -> None:
    assert _builtin_lexer_for_filename(name) == _every_pattern(name)


def test_known_names() -> None:
    for name in ("a.py", "Makefile", "x.tar.gz", "CMakeLists.txt", "x.min.js", "a.b.java"):
        assert _builtin_lexer_for_filename(name) == _every_pattern(name)

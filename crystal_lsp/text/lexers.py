"""Choosing a Pygments lexer for a piece of code.

The order is: an explicit language name, an editor language id, the file name, a shebang line,
and finally a guess from the content. When nothing matches, the ``generic`` lexer is used: a small
language-agnostic lexer (identifiers, numbers, strings, operators and brackets) so that unknown
files still give meaningful tokens instead of one big ``Text`` token.

Lexers are created with Pygments' default options, as the reference implementation creates
them; :func:`crystal_lsp.text.tokens.lex` prepares the input as ``lexer.get_tokens`` does and maps
token offsets back to the raw source (:mod:`crystal_lsp.text.lexinput`).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re

import pygments
from pygments.lexer import Lexer, RegexLexer
from pygments.lexers import find_lexer_class, find_lexer_class_by_name, guess_lexer
from pygments.lexers._mapping import LEXERS
from pygments.token import Name, Number, Operator, Punctuation, String, Text
from pygments.util import ClassNotFound

from crystal_lsp.errors import CrystalError
from crystal_lsp.text.fastlex.tables import prepare
from crystal_lsp.version import __version__

GENERIC = "generic"
PLAIN_TEXT = "text"
# Languages the clone finder indexes by default (canonical names, see ``canonical_name``):
# programming languages, not markup, data or configuration formats.
PROGRAMMING_LANGUAGES = frozenset(
    {
        "awk",
        "bash",
        "c",
        "clojure",
        "coffeescript",
        "cpp",
        "cr",
        "csharp",
        "cuda",
        "cython",
        "d",
        "dart",
        "delphi",
        "elixir",
        "elm",
        "erlang",
        "fortran",
        "fsharp",
        "gdscript",
        "go",
        "groovy",
        "haskell",
        "java",
        "javascript",
        "jsx",
        "julia",
        "kotlin",
        "lua",
        "matlab",
        "nimrod",
        "objective-c",
        "objective-c++",
        "ocaml",
        "perl",
        "php",
        "powershell",
        "purescript",
        "python",
        "racket",
        "ruby",
        "rust",
        "scala",
        "scheme",
        "solidity",
        "splus",
        "sql",
        "swift",
        "tcl",
        "tsx",
        "typescript",
        "vala",
        "vb.net",
        "vue",
        "zig",
        "zsh",
    }
)

# Editor language ids (VS Code's, which most clients reuse) whose name is not a Pygments alias.
EDITOR_LANGUAGE_IDS = {
    "javascriptreact": "jsx",
    "typescriptreact": "tsx",
    "shellscript": "bash",
    "objective-c": "objective-c",
    "objective-cpp": "objective-c++",
    "csharp": "csharp",
    "fsharp": "fsharp",
    "vb": "vbnet",
    "plaintext": "text",
    "jsonc": "json",
    "dockercompose": "yaml",
    "terraform": "terraform",
    "proto3": "protobuf",
    "cuda-cpp": "cuda",
}

# File name suffixes whose Pygments match is ambiguous or wrong for code bases.
SUFFIXES = {
    ".pl": "perl",
    ".pm": "perl",
    ".t": "perl",
    ".r": "r",
    ".sql": "sql",
    ".h": "c",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".m": "objective-c",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".pyi": "python",
    ".pyw": "python",
}

SHEBANG_INTERPRETERS = {
    "python": "python",
    "pypy": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "typescript",
    "bash": "bash",
    "sh": "bash",
    "zsh": "zsh",
    "ksh": "bash",
    "dash": "bash",
    "ruby": "ruby",
    "perl": "perl",
    "php": "php",
    "lua": "lua",
    "tclsh": "tcl",
    "Rscript": "r",
}

_SHEBANG = re.compile(r"#!\s*(\S+)(?:\s+(\S+))?")
_VERSION_SUFFIX = re.compile(r"[\d.]+$")


class GenericCodeLexer(RegexLexer):  # type: ignore[misc]
    """A language-agnostic lexer for files no Pygments lexer claims."""

    name = "Generic code"
    aliases = [GENERIC]  # noqa: RUF012 - Pygments' class-attribute protocol
    filenames: list[str] = []  # noqa: RUF012

    tokens = {  # noqa: RUF012
        "root": [
            (r"\s+", Text.Whitespace),
            (r'"(?:\\.|[^"\\\n])*"?', String),
            (r"'(?:\\.|[^'\\\n])*'?", String),
            (r"`(?:\\.|[^`\\])*`?", String),
            (r"0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?", Number),
            (r"[^\W\d]\w*", Name),
            (r"[()\[\]{},;.]", Punctuation),
            (r"[-+*/%=<>!&|^~?:@#$\\]+", Operator),
            (r".", Text),
        ]
    }


class PlainTextLexer(RegexLexer):  # type: ignore[misc]
    """Plain text: a token is a run of non-whitespace (Pygments' own keeps a whole line)."""

    name = "Text only"
    aliases = [PLAIN_TEXT]  # noqa: RUF012 - Pygments' class-attribute protocol
    filenames: list[str] = []  # noqa: RUF012

    tokens = {  # noqa: RUF012
        "root": [(r"\s+", Text.Whitespace), (r"\S+", Text)]
    }


def canonical_name(lexer: Lexer) -> str:
    """The language name crystal_lsp uses for a lexer: its first Pygments alias."""
    aliases = getattr(lexer, "aliases", None) or [type(lexer).__name__.lower()]
    return str(aliases[0])


@functools.lru_cache(maxsize=256)
def _lexer_by_name(name: str) -> Lexer:
    """``get_lexer_by_name(name)``, its rules compiled from the stored tables (:func:`prepare`)."""
    if name == GENERIC:
        cls: type[Lexer] = GenericCodeLexer
    elif name in (PLAIN_TEXT, "plain", "txt"):
        cls = PlainTextLexer
    else:
        cls = find_lexer_class_by_name(name)
    prepare(cls)
    return cls()


@functools.lru_cache(maxsize=1024)
def _lexer_for_suffix(basename: str) -> Lexer | None:
    _, suffix = os.path.splitext(basename)
    mapped = SUFFIXES.get(suffix.lower())
    if mapped is not None:
        return _lexer_by_name(mapped)
    found = _builtin_lexer_for_filename(basename)
    if found is None or found == "text":
        return None
    return _lexer_by_name(found)


def _builtin_lexer_for_filename(basename: str) -> str | None:
    """Pygments' file-name lookup over its built-in lexers only.

    ``pygments.lexers.get_lexer_for_filename`` also asks every installed package for plugin
    lexers through ``importlib.metadata``, which costs about half a second per process; this is
    the same rating (lexer priority, +0.5 for an exact file name) without that scan. The
    ``*.ext`` patterns (nine in ten) are looked up by the name's suffixes instead of matched one
    by one: a cold scan resolves every file name once per worker.
    """
    by_suffix, others = _filename_patterns()
    candidates = [
        entry
        for i, char in enumerate(basename)
        if char == "."
        for entry in by_suffix.get(basename[i:], ())
    ]
    candidates += [entry for entry in others if fnmatch.fnmatchcase(basename, entry[0])]
    best: tuple[float, str, str] | None = None
    for pattern, name, alias, _rank in sorted(candidates, key=lambda e: e[3]):
        cls = find_lexer_class(name)
        priority = float(getattr(cls, "priority", 0) or 0)
        rating = (priority + (0.5 if "*" not in pattern else 0.0), name, alias)
        if best is None or rating[:2] > best[:2]:
            best = rating
    return best[2] if best is not None else None


_Pattern = tuple[str, str, str, int]
"""A file-name pattern, its lexer's name and first alias, and its rank in Pygments' order."""


@functools.lru_cache(maxsize=1)
def _filename_patterns() -> tuple[dict[str, list[_Pattern]], list[_Pattern]]:
    """Pygments' file-name patterns: ``*.ext`` ones by suffix, the others in a list."""
    by_suffix: dict[str, list[_Pattern]] = {}
    others: list[_Pattern] = []
    rank = 0
    for _module, name, aliases, filenames, _ in LEXERS.values():
        for pattern in filenames:
            if not aliases:
                continue
            entry = (pattern, name, aliases[0], rank)
            rank += 1
            suffix = pattern[1:]
            if pattern.startswith("*.") and not any(c in suffix for c in "*?[]"):
                by_suffix.setdefault(suffix, []).append(entry)
            else:
                others.append(entry)
    return by_suffix, others


def lexer_by_language(language: str) -> Lexer:
    """The lexer for a language name or editor language id; raises ``CrystalError`` if unknown."""
    key = language.strip()
    mapped = EDITOR_LANGUAGE_IDS.get(key, key)
    for candidate in (mapped, mapped.lower()):
        try:
            return _lexer_by_name(candidate)
        except ClassNotFound:
            continue
    raise CrystalError(
        f"unknown language {language!r}: use a Pygments lexer name such as python, java, "
        f"javascript, c, cpp, go or rust (Pygments {pygments.__version__} knows "
        "`pygmentize -L lexers`), or 'generic'"
    )


def lexer_for_shebang(source: str) -> Lexer | None:
    """The lexer named by a ``#!`` first line, if any."""
    if not source.startswith("#!"):
        return None
    match = _SHEBANG.match(source.split("\n", 1)[0])
    if match is None:
        return None
    program = os.path.basename(match.group(1))
    if program == "env" and match.group(2):
        program = os.path.basename(match.group(2))
    program = _VERSION_SUFFIX.sub("", program) or program
    name = SHEBANG_INTERPRETERS.get(program)
    return _lexer_by_name(name) if name else None


def resolve_lexer(
    language: str | None = None,
    filename: str | None = None,
    source: str | None = None,
    *,
    guess: bool = True,
) -> Lexer:
    """Pick the lexer for code: language name or editor id, file name, shebang, guess, generic.

    An explicit ``language`` that Pygments does not know raises ``CrystalError``; every other
    path falls back silently to the next one and finally to the ``generic`` lexer.
    """
    if language:
        return lexer_by_language(language)
    if filename:
        found = _lexer_for_suffix(os.path.basename(filename))
        if found is not None:
            if source and filename.lower().endswith(".h") and is_cpp_header(source):
                return _lexer_by_name("cpp")
            return found
    if source:
        found = lexer_for_shebang(source)
        if found is not None:
            return found
        if guess:
            guessed = _guess(source)
            if guessed is not None:
                return guessed
    return _lexer_by_name(GENERIC)


# What only C++ has: a class, namespace or template declaration, an access label, `std::`, or a
# standard header without `.h` (`#include <vector>`).
_CPP_MARKERS = re.compile(
    r"^[ \t]*(?:class[ \t]+\w+(?:[ \t]+\w+)*[ \t]*(?:[:{;]|final\b|$)"
    r"|struct[ \t]+\w+(?:[ \t]+\w+)*[ \t]*(?::(?!:)|final\b)"
    r"|namespace\b(?:[ \t]+[\w:]+)?[ \t]*\{|template[ \t]*<"
    r"|(?:public|private|protected)[ \t]*:(?!:)|#[ \t]*include[ \t]*<[a-z_]+>)"
    r"|\bstd::",
    re.MULTILINE,
)


def is_cpp_header(source: str) -> bool:
    """Whether a ``.h`` file is C++, which Pygments lexes as C.

    A C++ header is then lexed, and compared with the C++ sources, as C++: a class copied into
    ``a.h`` and ``b.cc`` is found.
    """
    return _CPP_MARKERS.search(source) is not None


def _guess(source: str) -> Lexer | None:
    try:
        guessed = guess_lexer(source[:20_000])
    except ClassNotFound:
        return None
    name = canonical_name(guessed)
    # Pygments' guesses for arbitrary snippets are unreliable; only trust languages people
    # paste into an editor, and only when the lexer claims the text with some confidence.
    if name in {"text", "output"} or guessed.analyse_text(source[:20_000]) < 0.3:
        return None
    return _lexer_by_name(name)


def language_of(lexer: Lexer) -> str:
    """Alias for :func:`canonical_name`, named for readability at call sites."""
    return canonical_name(lexer)


def lexer_label(lexer: Lexer) -> str:
    """A short label naming the lexer class and whose it is (Pygments' version), for S files."""
    if isinstance(lexer, (GenericCodeLexer, PlainTextLexer)):
        return f"{type(lexer).__name__}@crystal-lsp-{__version__}"
    return f"{type(lexer).__name__}@pygments-{pygments.__version__}"


def tokenizer_name(language: str) -> str:
    """The ``tok:`` field of a score's signature for a language (canonical name).

    ``text`` and ``generic`` are crystal_lsp's own lexers (runs of non-white space; identifiers,
    numbers, strings and operators of any language), not Pygments'.
    """
    if language in (PLAIN_TEXT, GENERIC):
        return f"crystal-lsp-{language}"
    return f"pygments-{pygments.__version__}"

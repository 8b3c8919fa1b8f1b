"""Line comments of each language: how a line of text is written as a comment in its code.

The *Suppress* quick fix writes ``crystal: ignore`` as a comment; the compare view heads both
copies with a comment listing the renaming. Languages with block comments only (CSS, HTML)
give a prefix and a suffix.
"""

from __future__ import annotations

_HASH = {
    "python",
    "cython",
    "ruby",
    "perl",
    "bash",
    "zsh",
    "fish",
    "powershell",
    "r",
    "splus",
    "julia",
    "elixir",
    "nimrod",
    "coffeescript",
    "cr",
    "tcl",
    "awk",
    "make",
    "yaml",
    "toml",
    "gdscript",
}
_DASHES = {"sql", "haskell", "lua", "elm", "purescript", "ada", "vhdl"}
_SEMICOLON = {"clojure", "racket", "scheme", "common-lisp", "lisp", "emacs-lisp"}
_PERCENT = {"matlab", "erlang", "octave", "tex", "latex", "prolog"}
_BLOCK = {
    "css": ("/*", " */"),
    "html": ("<!--", " -->"),
    "xml": ("<!--", " -->"),
    "vue": ("//", ""),
    "ocaml": ("(*", " *)"),
    "fsharp": ("//", ""),
    "vb.net": ("'", ""),
    "fortran": ("!", ""),
}


def comment_for(language: str) -> tuple[str, str]:
    """The line-comment prefix (and suffix, for block-only languages) of a language."""
    if language in _BLOCK:
        return _BLOCK[language]
    if language in _HASH:
        return "#", ""
    if language in _DASHES:
        return "--", ""
    if language in _SEMICOLON:
        return ";;", ""
    if language in _PERCENT:
        return "%", ""
    return "//", ""

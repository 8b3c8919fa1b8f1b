"""Choosing the lexer: language names, editor ids, file names, shebangs, guesses, ``generic``."""

from __future__ import annotations

import pytest

from crystal_lsp import CrystalError
from crystal_lsp.text.lexers import (
    EDITOR_LANGUAGE_IDS,
    GENERIC,
    GenericCodeLexer,
    canonical_name,
    lexer_by_language,
    lexer_for_shebang,
    lexer_label,
    resolve_lexer,
)


def _name(
    language: str | None = None, filename: str | None = None, source: str | None = None
) -> str:
    return canonical_name(resolve_lexer(language, filename, source))


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        pytest.param("python", "python", id="python"),
        pytest.param("Python", "python", id="capitalised"),
        pytest.param("PY", "python", id="upper-alias"),
        pytest.param("python3", "python", id="alias-python3"),
        pytest.param(" java ", "java", id="padded"),
        pytest.param("js", "javascript", id="alias-js"),
        pytest.param("c++", "cpp", id="alias-c++"),
        pytest.param("golang", "go", id="alias-golang"),
        pytest.param("rust", "rust", id="rust"),
        pytest.param("generic", GENERIC, id="generic"),
    ],
)
def test_explicit_language_names_and_aliases(language: str, expected: str) -> None:
    assert _name(language) == expected


@pytest.mark.parametrize(
    ("editor_id", "expected"),
    [
        pytest.param("javascriptreact", "jsx", id="javascriptreact"),
        pytest.param("typescriptreact", "tsx", id="typescriptreact"),
        pytest.param("shellscript", "bash", id="shellscript"),
        pytest.param("csharp", "csharp", id="csharp"),
        pytest.param("objective-cpp", "objective-c++", id="objective-cpp"),
        pytest.param("jsonc", "json", id="jsonc"),
        pytest.param("vb", "vb.net", id="vb"),
        pytest.param("proto3", "protobuf", id="proto3"),
        pytest.param("dockercompose", "yaml", id="dockercompose"),
        pytest.param("typescript", "typescript", id="typescript-is-a-pygments-alias"),
    ],
)
def test_editor_language_ids(editor_id: str, expected: str) -> None:
    assert _name(editor_id) == expected


@pytest.mark.parametrize("editor_id", sorted(EDITOR_LANGUAGE_IDS))
def test_every_editor_language_id_resolves(editor_id: str) -> None:
    assert canonical_name(lexer_by_language(editor_id))


@pytest.mark.parametrize("language", ["nosuchlanguage", "java++", "pythn"])
def test_unknown_explicit_language_is_an_error(language: str) -> None:
    with pytest.raises(CrystalError, match="unknown language"):
        resolve_lexer(language, "file.py", "x = 1")


def test_explicit_language_wins_over_file_name_and_shebang() -> None:
    assert _name("java", "script.py", "#!/usr/bin/env python3\n") == "java"


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        pytest.param("a.py", "python", id="py"),
        pytest.param("pkg/mod/a.pyi", "python", id="pyi-override"),
        pytest.param("a.pyw", "python", id="pyw-override"),
        pytest.param("Main.java", "java", id="java"),
        pytest.param("a.js", "javascript", id="js"),
        pytest.param("a.mjs", "javascript", id="mjs-override"),
        pytest.param("a.cjs", "javascript", id="cjs-override"),
        pytest.param("a.ts", "typescript", id="ts"),
        pytest.param("a.tsx", "tsx", id="tsx"),
        pytest.param("a.jsx", "jsx", id="jsx"),
        pytest.param("a.go", "go", id="go"),
        pytest.param("a.rs", "rust", id="rs"),
        pytest.param("a.c", "c", id="c"),
        pytest.param("a.cpp", "cpp", id="cpp"),
        pytest.param("a.pl", "perl", id="pl-override-not-prolog"),
        pytest.param("a.pm", "perl", id="pm-override"),
        pytest.param("a.t", "perl", id="t-override"),
        pytest.param("a.r", "splus", id="r-override"),
        pytest.param("a.R", "splus", id="R-override-case-insensitive"),
        pytest.param("a.sql", "sql", id="sql-override"),
        pytest.param("a.h", "c", id="h-override"),
        pytest.param("a.hh", "cpp", id="hh-override"),
        pytest.param("a.hpp", "cpp", id="hpp-override"),
        pytest.param("a.m", "objective-c", id="m-override-not-matlab"),
        pytest.param("Makefile", "make", id="makefile"),
        pytest.param("Dockerfile", "docker", id="dockerfile"),
        pytest.param("notes.txt", GENERIC, id="txt-is-not-code"),
        pytest.param("a.unknownext", GENERIC, id="unknown-extension"),
        pytest.param("README", GENERIC, id="no-extension"),
    ],
)
def test_lexer_from_file_name(filename: str, expected: str) -> None:
    assert _name(None, filename, None) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("#!/usr/bin/env python3\nprint(1)\n", "python", id="env-python3"),
        pytest.param("#!/usr/bin/python3.11\nx\n", "python", id="python-version-suffix"),
        pytest.param("#!/bin/sh\necho hi\n", "bash", id="sh"),
        pytest.param("#!/usr/bin/env bash\necho\n", "bash", id="env-bash"),
        pytest.param("#!/usr/bin/node\nx\n", "javascript", id="node"),
        pytest.param("#!/usr/bin/env ruby\nputs 1\n", "ruby", id="env-ruby"),
        pytest.param("#!/usr/bin/env Rscript\nx\n", "splus", id="rscript"),
        pytest.param("#!  /usr/bin/perl -w\nprint;\n", "perl", id="space-after-bang"),
    ],
)
def test_lexer_from_shebang(source: str, expected: str) -> None:
    assert _name(None, None, source) == expected
    assert _name(None, "script", source) == expected  # no extension: the shebang decides


@pytest.mark.parametrize(
    "source",
    ["#!/usr/bin/env unknownthing\nx\n", "#!\n", "print(1)\n", "", "#! \n"],
)
def test_lexer_for_shebang_without_known_interpreter(source: str) -> None:
    assert lexer_for_shebang(source) is None


def test_file_name_wins_over_shebang() -> None:
    assert _name(None, "tool.rb", "#!/usr/bin/env python3\n") == "ruby"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("<!DOCTYPE html>\n<html><body><p>x</p></body></html>\n", "html", id="html"),
        pytest.param("<?xml version='1.0'?>\n<a><b/></a>\n", "xml", id="xml"),
    ],
)
def test_lexer_guessed_from_content(source: str, expected: str) -> None:
    assert _name(None, None, source) == expected


def test_guessing_can_be_disabled() -> None:
    html = "<!DOCTYPE html>\n<html><body></body></html>\n"
    assert canonical_name(resolve_lexer(None, None, html, guess=False)) == GENERIC


@pytest.mark.parametrize(
    ("filename", "source"),
    [
        pytest.param(None, None, id="nothing"),
        pytest.param(None, "zzz qqq (1, 2);", id="unrecognisable-text"),
        pytest.param("data.unknownext", "zzz qqq", id="unknown-file"),
        pytest.param("notes.txt", "plain words only", id="text-file"),
    ],
)
def test_generic_fallback(filename: str | None, source: str | None) -> None:
    lexer = resolve_lexer(None, filename, source)
    assert isinstance(lexer, GenericCodeLexer)
    assert canonical_name(lexer) == GENERIC


def test_lexers_have_pygments_default_options() -> None:
    # as the reference creates them; lex() prepares the input and maps offsets back itself
    lexer = resolve_lexer("python")
    assert lexer.options == {}
    assert lexer.stripnl and lexer.ensurenl and not lexer.stripall and lexer.tabsize == 0


def test_lexer_label_names_class_and_pygments_version() -> None:
    import pygments

    label = lexer_label(resolve_lexer("python"))
    assert label == f"PythonLexer@pygments-{pygments.__version__}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("class EXPORT_API Widget : public Base {\n};\n", "cpp", id="class"),
        pytest.param("class Widget\n{\n};\n", "cpp", id="class-allman"),
        pytest.param("namespace acme {\nint f();\n}\n", "cpp", id="namespace"),
        pytest.param("template <typename T>\nT f(T x);\n", "cpp", id="template"),
        pytest.param("#include <vector>\nint f();\n", "cpp", id="standard-header"),
        pytest.param("struct B : public A {\n};\n", "cpp", id="derived-struct"),
        pytest.param("#include <stdio.h>\nstruct point {\n  int x;\n};\n", "c", id="c-struct"),
        pytest.param("typedef struct node node_t;\nint class_count;\n", "c", id="c-typedef"),
    ],
)
def test_a_cpp_header_is_lexed_as_cpp(source: str, expected: str) -> None:
    """Pygments lexes ``.h`` as C; a header only C++ can compile is C++, and compared with it."""
    assert _name(None, "include/a.h", source) == expected
    assert _name(None, "src/a.c", source) == "c"

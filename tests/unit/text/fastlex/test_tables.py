"""The lexers' stored tables: patterns equal to ``re.compile``'s, Pygments' tokens, a damaged file
rebuilt, the file in the cache directory only."""

from __future__ import annotations

import hashlib
import marshal
import os
import re
from pathlib import Path
from typing import Any

import pytest
from fastlex_samples import FRAGMENTS
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer
from pygments.lexers.python import PythonLexer

from crystal_lsp.text.cachedir import cache_root
from crystal_lsp.text.fastlex import get_tokens, program_for, select, tables
from crystal_lsp.text.fastlex.tables import Tables, prepare
from crystal_lsp.text.lexers import PROGRAMMING_LANGUAGES, lexer_by_language

LANGUAGES = sorted(PROGRAMMING_LANGUAGES)
TEXT = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), min_size=1, max_size=10
).map("".join)


def _rule_patterns(lexer_class: type) -> list[re.Pattern[str]]:
    lexer = lexer_class()
    return [rex.__self__ for entries in lexer._tokens.values() for rex, _a, _n in entries]


def _subclass(cls: type, stored: Tables | None) -> type:
    """A fresh class with ``cls``'s rules, unprocessed; prepared from ``stored`` if given."""
    sub = type(f"Probe{cls.__name__}", (cls,), {"__module__": __name__})
    if stored is not None:
        tables._TABLES[sub] = stored
        prepare(sub)
    return sub


def _classes(languages: list[str]) -> list[type]:
    found = [type(lexer_by_language(name)) for name in languages]
    return [cls for cls in found if issubclass(cls, RegexLexer)]


def test_stored_patterns_equal_re_compile(tmp_path: Path) -> None:
    """Every rule of every indexed language, compiled fresh and loaded back: ``re.compile``'s."""
    cold = Tables(str(tmp_path / "t.bin"))
    patterns = [p for cls in _classes(LANGUAGES) for p in _rule_patterns(cls)]
    assert len(patterns) > 5000
    for p in patterns:
        assert cold.compile(p.pattern, p.flags) == re.compile(p.pattern, p.flags)
    cold.save()
    warm = Tables(str(tmp_path / "t.bin"))
    assert len(warm.compiled) == len(cold.compiled)
    for p in patterns:
        assert warm.compile(p.pattern, p.flags) == p
    assert warm.added == 0


def test_prepared_rules_are_pygments_own() -> None:
    """A class processed from stored tables holds the rules Pygments' processing gives it."""
    for cls in _classes(["python", "c", "cpp", "javascript", "java", "go", "rust", "php"]):
        ours = _subclass(cls, Tables(None))
        theirs = _subclass(cls, None)
        theirs()  # Pygments processes its rules on the first creation
        assert "_tokens" in ours.__dict__ and "_process_regex" not in ours.__dict__
        assert list(ours._tokens) == list(theirs._tokens)
        for state, rules in theirs._tokens.items():
            mine = ours._tokens[state]
            assert [(r.__self__, a, n) for r, a, n in mine] == [
                (r.__self__, a, n) for r, a, n in rules
            ]


@pytest.fixture(scope="module")
def stored_file(tmp_path_factory: pytest.TempPathFactory) -> dict[type, str]:
    """Tables written by a cold run over every fragment (rules and joined buckets)."""
    folder = tmp_path_factory.mktemp("stored")
    paths: dict[type, str] = {}
    for cls in _classes(["python", "javascript", "c", "cpp", "java", "ruby", "go"]):
        cold = Tables(str(folder / f"{cls.__name__}.bin"))
        lexer = _subclass(cls, cold)()
        if program_for(lexer) is not None:
            for text in [*FRAGMENTS, "".join(FRAGMENTS)] * 30:  # past COMPILE_AFTER
                list(get_tokens(lexer, text))
        cold.save()
        paths[cls] = str(cold.path)
    return paths


def test_loaded_tables_compile_nothing(stored_file: dict[type, str]) -> None:
    for cls, path in stored_file.items():
        warm = Tables(path)
        lexer = _subclass(cls, warm)()
        if program_for(lexer) is not None:
            list(get_tokens(lexer, "".join(FRAGMENTS)))
        assert warm.added == 0, cls


@settings(max_examples=60, deadline=None)
@given(TEXT, st.sampled_from(range(7)))
def test_lexers_from_loaded_tables_give_pygments_tokens(
    stored_file: dict[type, str], text: str, which: int
) -> None:
    cls, path = sorted(stored_file.items(), key=lambda item: item[0].__name__)[which]
    lexer = _subclass(cls, Tables(path))()
    reference = _subclass(cls, None)()
    assert list(get_tokens(lexer, text)) == list(reference.get_tokens_unprocessed(text))


def _write(path: Path, payload: bytes) -> None:
    path.write_bytes(
        tables._MAGIC + hashlib.blake2b(payload, digest_size=tables._DIGEST).digest() + payload
    )


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "digest", "structure", "code", "types", "starts"],
)
def test_a_damaged_file_is_ignored_and_rebuilt(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "t.bin"
    source, flags = r"[a-z_]\w*|(?P<n>\d+)", 0
    cold = Tables(str(path))
    cold.compile(source, flags)
    cold.first_chars(re.compile(source))
    cold.save()
    blob = path.read_bytes()
    key = (source, re.compile(source).flags)
    entry = cold.compiled[(source, flags)]
    if damage == "garbage":
        path.write_bytes(b"\x00not a table" * 10)
    elif damage == "truncated":
        path.write_bytes(blob[: len(blob) // 2])
    elif damage == "digest":
        path.write_bytes(blob[:-1] + bytes([blob[-1] ^ 1]))
    elif damage == "structure":
        _write(path, marshal.dumps(("not", "tables")))
    elif damage == "code":  # SRE code that _sre.compile's validation refuses
        bad = (entry[0], b"\x07\x00\x00\x00" * 3, *entry[2:])
        _write(path, marshal.dumps((tables.FORMAT, {(source, flags): bad}, {}, {})))
    elif damage == "types":
        bad = (entry[0], "code", *entry[2:])
        _write(path, marshal.dumps((tables.FORMAT, {(source, flags): bad}, {}, {})))
    else:
        _write(path, marshal.dumps((tables.FORMAT, {}, {key: "abc"}, {})))
    warm = Tables(str(path))
    assert warm.compile(source, flags) == re.compile(source, flags)
    assert warm.first_chars(re.compile(source)) == frozenset(b"_0123456789" + bytes(range(97, 123)))
    assert warm.added > 0
    warm.maybe_save()
    again = Tables(str(path))
    assert again.compiled[(source, flags)] == entry
    assert again.compile(source, flags) == re.compile(source, flags) and again.added == 0


def test_an_unwritable_cache_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    stored = Tables(str(tmp_path / "file" / "t.bin"))  # its folder cannot be made
    stored.compile("a+", 0)
    stored.save()
    assert stored.path is None and os.listdir(tmp_path) == ["file"]


def test_tables_live_in_the_cache_directory_only(crystal_cache_dir: Path) -> None:
    path = tables._path(PythonLexer)
    assert path is not None
    assert Path(path).is_relative_to(Path(cache_root()) / "lexers")
    assert Path(cache_root()) == crystal_cache_dir
    assert tables._path(_subclass(PythonLexer, None)) is None  # not Pygments' nor ours


def test_a_process_saves_what_it_compiled(crystal_cache_dir: Path, monkeypatch: Any) -> None:
    """The first lexing of a language writes its tables under the cache directory."""
    monkeypatch.setattr(tables, "_TABLES", {})
    monkeypatch.setattr(select, "_PROGRAMS", {})
    monkeypatch.setattr(select, "_RUNNERS", {})
    cls = type("ProbeSaved", (PythonLexer,), {"__module__": "pygments.lexers.python"})
    from crystal_lsp.text.tokens import lex

    prepare(cls)
    lex("def f(x):\n    return x + 1\n", cls())
    written = list((crystal_cache_dir / "lexers").glob("*/pygments.lexers.python.ProbeSaved.bin"))
    assert len(written) == 1
    saved = Tables(str(written[0]))
    assert len(saved.compiled) > 80 and len(saved.starts) > 80  # 85 distinct rules


_PROCESS = """
import hashlib, json, sys
mode, items = sys.argv[1], json.load(open(sys.argv[2]))
digests, fresh, seen = {}, 0, set()
for name, text in items:
    if mode == "pygments":
        from pygments.lexers import get_lexer_by_name
        tokens = list(get_lexer_by_name(name).get_tokens_unprocessed(text))
    else:
        from crystal_lsp.text.fastlex import get_tokens, program_for, tables
        from crystal_lsp.text.lexers import lexer_by_language
        lexer = lexer_by_language(name)
        if type(lexer) not in seen:  # rules compiled, not yet used
            program_for(lexer)
            seen.add(type(lexer))
            stored = tables._TABLES.get(type(lexer))
            fresh += stored.added if stored is not None and stored.path else 0
        tokens = list(get_tokens(lexer, text))
        tables.save_tables(type(lexer))
    key = f"{name} {len(digests)}"
    digests[key] = hashlib.sha256(repr(tokens).encode("utf-8", "surrogatepass")).hexdigest()
print(json.dumps({"digests": digests, "fresh": fresh}))
"""


def test_processes_cold_warm_and_pygments_give_the_same_tokens(tmp_path: Path) -> None:
    """A process that builds the tables, one that loads them and Pygments alone: same tokens."""
    import json
    import subprocess
    import sys
    import sysconfig

    stdlib = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[::25]
    items = [("python", p.read_text(encoding="utf-8", errors="replace")) for p in stdlib]
    text = "".join(FRAGMENTS) + "".join(reversed(FRAGMENTS))
    items += [(name, text) for name in LANGUAGES]
    (tmp_path / "items.json").write_text(json.dumps(items))
    env = {**os.environ, "CRYSTAL_LSP_CACHE_DIR": str(tmp_path / "cache")}

    def run(mode: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-c", _PROCESS, mode, str(tmp_path / "items.json")],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout)

    cold, warm, pygments = run("ours"), run("ours"), run("pygments")
    assert cold["fresh"] > 1000 and warm["fresh"] == 0
    assert cold["digests"] == pygments["digests"] == warm["digests"]
    assert len(list((tmp_path / "cache" / "lexers").glob("*/*.bin"))) > 20

"""The lexers' compiled regular expressions, kept on disk: built once, loaded by every process.

Pygments compiles every rule of a ``RegexLexer`` when the lexer is first created, and the
executor parses each rule again (its first characters, :mod:`.firstchars`) and compiles the
alternations of its buckets: 0.15-0.2 s CPU for Python in every process that lexes (each pool
worker, hook run and server). Here an expression is compiled as :func:`re.compile` compiles it
(``re._parser.parse``, then ``re._compiler._code``) and what ``_sre.compile`` takes -- the
flags, the code words, the groups and their names -- is kept with the rules' first characters;
a later process makes the same pattern from them in microseconds. ``_sre.compile`` is the last
step of ``re.compile`` and validates the code it is given: the pattern equals (``==``)
``re.compile``'s, so every token is the same.

One file per lexer class, under ``<cache root>/lexers/<key>/`` (:func:`~crystal_lsp.text.cachedir
.cache_root`: the user's cache directory, never a repository), the key a digest of the Python
version and ``_sre.MAGIC``, the Pygments version, crystal-lsp's version and the source of the
modules whose results are kept. Only the lexers of Pygments and of crystal-lsp are kept on disk
(a plugin's lexer has no version in the key). A file holds plain data (``marshal`` of strings,
numbers, bytes, tuples and dicts; every value is type-checked before use and nothing in it is
ever run), is written atomically by this module only and verified by a BLAKE2 digest: a file
that does not verify is ignored and written anew.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import marshal
import os
import re
import sys
import threading
from array import array
from typing import Any

import pygments
from pygments.lexer import Future, RegexLexerMeta, words

from crystal_lsp.text.cachedir import cache_root
from crystal_lsp.text.fastlex.firstchars import first_chars
from crystal_lsp.version import __version__

try:  # Python 3.11+
    import _sre  # type: ignore[import-not-found]
    from re import _compiler as sre_compile  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import _sre  # type: ignore[import-not-found]
    import sre_compile  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

FORMAT = 1
SAVE_EVERY = 8
"""After a process's first save, it writes again once this many new expressions are compiled
(and at exit what is left: a pool worker, which exits without ``atexit``, leaves the rest)."""
_MAGIC = b"CLSPLEX1"
_DIGEST = 16
_SUPPORTED = hasattr(sre_compile, "_code") and hasattr(_sre, "compile")
_CODE = "I" if array("I").itemsize == getattr(_sre, "CODESIZE", 4) else "L"
_KEPT_MODULES = ("pygments.", "crystal_lsp.")
_DEBUG = int(re.DEBUG)

Key = tuple[str, int]
Compiled = tuple[int, bytes, int, dict[str, int], tuple[Any, ...]]
"""What ``_sre.compile`` takes besides the pattern text: flags, code words, groups - 1, names."""


class Tables:
    """The compiled expressions of one lexer class, loaded from and saved to one file."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.compiled: dict[Key, Compiled] = {}
        self.starts: dict[Key, bytes] = {}
        self.words: dict[Any, str] = {}
        self.added = 0
        """Entries made by this process and not saved yet."""
        self.saved = False
        self._lock = threading.Lock()
        if path is not None:
            self._load(path)

    def compile(self, source: str, flags: int) -> re.Pattern[str]:
        """``re.compile(source, flags)``, from the stored code when there is one."""
        flags = int(flags)
        if not _SUPPORTED or flags & _DEBUG or type(source) is not str:
            return re.compile(source, flags)
        key = (source, flags)
        found = self.compiled.get(key)
        if found is not None:
            try:
                return _build(source, found)
            except Exception:  # a damaged entry: compiled again and replaced below
                pass
        pattern, data = _fresh(source, flags)
        self.compiled[key] = data
        self.added += 1
        return pattern

    def has(self, source: str, flags: int) -> bool:
        """Whether ``source`` compiled with ``flags`` is stored."""
        return (source, int(flags)) in self.compiled

    def first_chars(self, pattern: re.Pattern[str]) -> frozenset[int]:
        """:func:`~crystal_lsp.text.fastlex.firstchars.first_chars` of a pattern, stored."""
        key = (pattern.pattern, pattern.flags)
        found = self.starts.get(key)
        if type(found) is not bytes:
            found = self.starts[key] = bytes(sorted(first_chars(pattern)))
            self.added += 1
        return frozenset(found)

    def regex(self, regex: Any) -> Any:
        """The expression of a Pygments rule: a ``words`` list's alternation is stored."""
        if type(regex) is not words or not all(type(w) is str for w in regex.words):
            return regex.get() if isinstance(regex, Future) else regex
        key = (tuple(regex.words), regex.prefix, regex.suffix)
        found = self.words.get(key)
        if type(found) is not str:
            found = self.words[key] = regex.get()
            self.added += 1
        return found

    def maybe_save(self) -> None:
        """Save after this process's first new entries, then every :data:`SAVE_EVERY` of them."""
        if self.added and (not self.saved or self.added >= SAVE_EVERY):
            self.save()

    def save(self) -> None:
        """Write the tables atomically (a cache that cannot be written is not written again)."""
        path = self.path
        if path is None:
            return
        with self._lock:
            payload = marshal.dumps(
                (FORMAT, dict(self.compiled), dict(self.starts), dict(self.words)), 4
            )
            self.added, self.saved = 0, True
        blob = _MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload
        folder = os.path.dirname(path)
        import tempfile  # only a process that compiled something new writes

        try:
            os.makedirs(folder, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(blob)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            self.path = None

    def _load(self, path: str) -> None:
        try:
            with open(path, "rb") as stream:
                blob = stream.read()
        except OSError:
            return
        head = len(_MAGIC) + _DIGEST
        payload = blob[head:]
        digest = hashlib.blake2b(payload, digest_size=_DIGEST).digest()
        if not blob.startswith(_MAGIC) or blob[len(_MAGIC) : head] != digest:
            return
        try:
            data = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            return
        if (
            type(data) is tuple
            and len(data) == 4
            and data[0] == FORMAT
            and all(type(part) is dict for part in data[1:])
        ):
            self.compiled, self.starts, self.words = data[1:]


def _build(source: str, data: Compiled) -> re.Pattern[str]:
    flags, code, groups, groupindex, indexgroup = data
    if type(code) is not bytes or type(groupindex) is not dict or type(indexgroup) is not tuple:
        raise TypeError("not a stored expression")
    words_ = array(_CODE, code).tolist()
    return _sre.compile(source, flags, words_, groups, groupindex, indexgroup)  # type: ignore[no-any-return]


def _fresh(source: str, flags: int) -> tuple[re.Pattern[str], Compiled]:
    """Compile as ``re._compiler.compile`` does, keeping what ``_sre.compile`` is given."""
    parsed = sre_parse.parse(source, flags)
    code = sre_compile._code(parsed, flags)
    state = parsed.state
    indexgroup: list[str | None] = [None] * state.groups
    for name, index in state.groupdict.items():
        indexgroup[index] = name
    data: Compiled = (
        flags | state.flags,
        array(_CODE, code).tobytes(),
        state.groups - 1,
        dict(state.groupdict),
        tuple(indexgroup),
    )
    return _build(source, data), data


_TABLES: dict[type, Tables] = {}
_PREPARING = threading.Lock()


def tables_for(cls: type) -> Tables:
    """The tables of a lexer class (loaded from disk on first use in this process)."""
    found = _TABLES.get(cls)
    if found is None:
        if not _TABLES:
            atexit.register(_save_all)
        found = _TABLES[cls] = Tables(_path(cls))
    return found


def _save_all() -> None:
    """At exit, what this process compiled since its last save (pool workers skip this)."""
    for found in list(_TABLES.values()):
        if found.added:
            found.save()


def _path(cls: type) -> str | None:
    module, name = cls.__module__, cls.__qualname__
    if not module.startswith(_KEPT_MODULES) or not name.isidentifier():
        return None
    return os.path.join(cache_root(), "lexers", _version_key(), f"{module}.{name}.bin")


@functools.lru_cache(maxsize=1)
def _version_key() -> str:
    digest = hashlib.sha256()
    parts = (sys.version, sys.implementation.cache_tag, _sre.MAGIC, _CODE, marshal.version)
    for part in (*parts, pygments.__version__, __version__, FORMAT):
        digest.update(f"{part}\0".encode())
    here = os.path.dirname(os.path.abspath(__file__))
    for module in ("tables.py", "firstchars.py", "program.py"):
        try:
            with open(os.path.join(here, module), "rb") as stream:
                digest.update(stream.read())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()[:16]


def prepare(cls: type) -> None:
    """Process a ``RegexLexer`` class's rules as its first creation would, from its tables.

    Pygments' own processing runs (its ``process_tokendef``), with its one call of
    ``re.compile`` answered by :meth:`Tables.compile`; a class already processed is left as is.
    """
    if not isinstance(cls, RegexLexerMeta) or "_tokens" in cls.__dict__:
        return
    if getattr(cls, "token_variants", False):
        return
    tables = tables_for(cls)

    def process_regex(regex: Any, rflags: int, state: str) -> Any:
        return tables.compile(tables.regex(regex), rflags).match

    with _PREPARING:
        if "_tokens" in cls.__dict__:
            return
        # a class attribute is found before the metaclass's method of the same name
        cls._process_regex = staticmethod(process_regex)  # type: ignore[attr-defined]
        try:
            cls._all_tokens = {}  # type: ignore[attr-defined]
            cls._tmpname = 0  # type: ignore[attr-defined]
            cls._tokens = cls.process_tokendef("", cls.get_tokendefs())  # type: ignore[attr-defined]
        except Exception:  # Pygments' own processing, on creation, says what is wrong
            pass
        finally:
            del cls._process_regex  # type: ignore[attr-defined]


def save_tables(cls: type) -> None:
    """Save a lexer class's tables if they grew (see :meth:`Tables.maybe_save`)."""
    found = _TABLES.get(cls)
    if found is not None:
        found.maybe_save()

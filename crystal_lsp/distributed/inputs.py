"""Corpus inputs streamed one document at a time: files, directories, archives, JSONL shards.

A corpus is given as paths: source files, directories (walked as ``sset build`` always did),
zip and tar archives (``.zip``, ``.jar``, ``.tar``, ``.tar.gz``, ``.tgz``, ``.tar.bz2``,
``.tar.xz``; members are read from the archive, never extracted), JSONL datasets (``.jsonl``,
``.jsonl.gz``), pair-labeled dataset folders (``code.jsonl`` + ``pairs.jsonl``, or CodeXGLUE's
``data.jsonl`` + ``train.txt``...: their programs, :mod:`crystal_lsp.metric.pairdata`) and globs
over any of these (``shards/*.jsonl.gz``, ``'src/**/*.java'``).

:func:`plan` turns the paths into :class:`Part` descriptors: file names, archive member names
or index ranges, dataset byte ranges -- never contents -- so a client can plan a corpus larger
than its memory. :func:`iter_documents` reads one part where it is processed (a pool process, a
Dask worker), one document at a time; only files that ``plan`` saw need to be readable there
(the same paths on every worker, e.g. a shared file system).

Which documents are used follows ``crystal-lsp sset build``: a file's language comes from its
name, then its shebang; files of no known language are skipped (``unknown language``) as are
binary, oversized and unreadable files (with the reason); with a language chosen, files of other
languages are left out. Every item of a dataset is used (only those of ``split`` when given; in a
pair-labeled folder, the programs of that split's pairs), in the chosen language or its ``lang``
field's.
"""

from __future__ import annotations

import glob
import os
import tarfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import NamedTuple

from crystal_lsp.clones.files import walk_files
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.datasets import iter_items
from crystal_lsp.metric.pairdata import layout_of, load_pair_dataset
from crystal_lsp.text.datafiles import MAX_DATA_BYTES, loads
from crystal_lsp.text.lexers import GENERIC, canonical_name, resolve_lexer
from crystal_lsp.text.sources import (
    DEFAULT_MAX_BYTES,
    GZIP_MAGIC,
    SkippedFile,
    open_regular,
    read_source,
    source_from_bytes,
)

FILES, ZIP, TAR, JSONL, PAIRS = "files", "zip", "tar", "jsonl", "pairs"
ZIP_SUFFIXES = (".zip", ".jar")
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
DATASET_SUFFIXES = (".jsonl", ".jsonl.gz")
DEFAULT_PART_BYTES = 4_000_000
MAX_PART_DOCS = 2_000
# Folders never read inside archives either (the same as a directory walk skips).
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".tox", ".mypy_cache"}
)
_GLOB_CHARS = frozenset("*?[")

Skipped = list[tuple[str, str]]


class Document(NamedTuple):
    """One document of a corpus: a display name, its text and its (canonical) language."""

    name: str
    text: str
    language: str


@dataclass(frozen=True)
class Part:
    """A partition of a corpus, small enough to ship to a worker: what to read, not its content.

    ``files``: ``names`` are file paths. ``zip``: ``names`` are members of the archive ``source``.
    ``tar``: the ``start``-th to ``stop - 1``-th selected file members of ``source``. ``jsonl``:
    the lines of the dataset ``source`` that start in bytes ``[start, stop)`` (``stop = -1``:
    to the end; gzip-compressed datasets are one part each). Relative names are relative to
    ``cwd``, the planner's working directory, so a worker elsewhere reads the same files.
    ``root``: for the files of a directory, that directory (their symlinks must stay inside it).
    """

    kind: str
    source: str = ""
    names: tuple[str, ...] = ()
    start: int = 0
    stop: int = -1
    size: int = 0
    cwd: str = ""
    root: str = ""

    def path(self, name: str) -> str:
        """Where to read ``name`` (a file, archive or dataset of this part) from."""
        return os.path.join(self.cwd, name)


@dataclass(frozen=True)
class Selection:
    """Which documents of the parts to use: language (canonical name), dataset split, size cap."""

    language: str | None = None
    split: str | None = None
    max_bytes: int = DEFAULT_MAX_BYTES


# ---------------------------------------------------------------------------------- planning
def expand(paths: Iterable[str]) -> list[str]:
    """The paths with globs expanded (sorted); a missing path or an empty glob is an error."""
    out: list[str] = []
    for path in paths:
        if os.path.exists(path):
            out.append(path)
        elif _GLOB_CHARS & set(path):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                raise CrystalError(f"{path}: no file matches this pattern")
            out.extend(matches)
        else:
            raise CrystalError(f"{path}: no such file or directory")
    return out


def input_kind(path: str) -> str:
    """``zip``, ``tar``, ``jsonl``, ``pairs`` (a pair-labeled dataset folder) or ``files``."""
    if os.path.isdir(path) and layout_of(path) is not None:
        return PAIRS
    if not os.path.isfile(path):
        return FILES
    if path.endswith(DATASET_SUFFIXES):
        return JSONL
    lower = path.lower()
    if lower.endswith(ZIP_SUFFIXES):
        return ZIP
    if lower.endswith(TAR_SUFFIXES):
        return TAR
    return FILES


def needs_streaming(paths: Iterable[str]) -> bool:
    """Whether the paths hold an archive or a glob (inputs only :mod:`inputs` can read)."""
    for path in paths:
        if not os.path.exists(path) and _GLOB_CHARS & set(path):
            return True
        if input_kind(path) in (ZIP, TAR):
            return True
    return False


def plan(paths: Iterable[str], part_bytes: int | None = None) -> list[Part]:
    """Partitions of the corpus, in reading order, of about ``part_bytes`` source bytes each."""
    part_bytes = part_bytes or DEFAULT_PART_BYTES
    parts: list[Part] = []
    for path in expand(paths):
        kind = input_kind(path)
        if kind == ZIP:
            parts.extend(_plan_zip(path, part_bytes))
        elif kind == TAR:
            parts.extend(_plan_tar(path, part_bytes))
        elif kind == JSONL:
            parts.extend(_plan_jsonl(path, part_bytes))
        elif kind == PAIRS:
            parts.append(Part(PAIRS, path))
        else:
            sized = ((f, _size(f)) for f in walk_files([path]))
            root = path if os.path.isdir(path) else ""
            for names, size in _groups(sized, part_bytes):
                parts.append(Part(FILES, names=names, size=size, root=root))
    cwd = os.getcwd()
    return [replace(part, cwd=cwd) for part in parts]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # reported as skipped when read


def _groups(
    sized: Iterable[tuple[str, int]], part_bytes: int
) -> Iterator[tuple[tuple[str, ...], int]]:
    names: list[str] = []
    total = 0
    for name, size in sized:
        if names and (total + size > part_bytes or len(names) >= MAX_PART_DOCS):
            yield tuple(names), total
            names, total = [], 0
        names.append(name)
        total += size
    if names:
        yield tuple(names), total


def _skipped_dir(member: str) -> bool:
    return any(part in SKIP_DIRS for part in member.split("/")[:-1])


def _plan_zip(path: str, part_bytes: int) -> Iterator[Part]:
    try:
        with open_regular(path) as raw, zipfile.ZipFile(raw) as archive:
            infos = [
                (i.filename, i.file_size)
                for i in archive.infolist()
                if not i.is_dir() and not _skipped_dir(i.filename)
            ]
    except SkippedFile as exc:
        raise CrystalError(f"{path}: not a readable zip archive ({exc.reason})") from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise CrystalError(f"{path}: not a readable zip archive ({exc})") from None
    for names, size in _groups(infos, part_bytes):
        yield Part(ZIP, path, names, size=size)


def _tar_members(archive: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """Selected file members in archive order, without TarFile's ever-growing member list."""
    for member in archive:
        archive.members = []  # type: ignore[attr-defined]
        if member.isfile() and not _skipped_dir(member.name):
            yield member


def _plan_tar(path: str, part_bytes: int) -> Iterator[Part]:
    try:
        with open_regular(path) as raw, tarfile.open(fileobj=raw, mode="r:*") as archive:
            sizes = [m.size for m in _tar_members(archive)]
    except SkippedFile as exc:
        raise CrystalError(f"{path}: not a readable tar archive ({exc.reason})") from None
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise CrystalError(f"{path}: not a readable tar archive ({exc})") from None
    start = 0
    for names, size in _groups(((str(i), s) for i, s in enumerate(sizes)), part_bytes):
        yield Part(TAR, path, start=start, stop=start + len(names), size=size)
        start += len(names)


def _is_gzip(path: str) -> bool:
    try:
        with open_regular(path) as fh:
            return fh.read(2) == GZIP_MAGIC
    except SkippedFile as exc:
        raise CrystalError(f"{path}: cannot read dataset ({exc.reason})") from None


def _plan_jsonl(path: str, part_bytes: int) -> Iterator[Part]:
    size = _size(path)
    if _is_gzip(path) or size <= part_bytes:
        yield Part(JSONL, path, size=size)
        return
    for start in range(0, size, part_bytes):
        stop = min(size, start + part_bytes)
        yield Part(JSONL, path, start=start, stop=-1 if stop >= size else stop, size=stop - start)


# ---------------------------------------------------------------------------------- reading
def iter_documents(part: Part, selection: Selection, skipped: Skipped) -> Iterator[Document]:
    """The documents of one part, read lazily; unusable files are appended to ``skipped``."""
    if part.kind == FILES:
        within = part.path(part.root) if part.root else None
        for name in part.names:
            try:
                source = read_source(part.path(name), selection.max_bytes, within)
            except SkippedFile as exc:
                skipped.append((name, exc.reason))
                continue
            doc = _file_document(name, source.text, selection, skipped)
            if doc is not None:
                yield doc
    elif part.kind == ZIP:
        yield from _zip_documents(part, selection, skipped)
    elif part.kind == TAR:
        yield from _tar_documents(part, selection, skipped)
    elif part.kind == JSONL:
        yield from _dataset_documents(part, selection)
    elif part.kind == PAIRS:
        yield from pair_documents(part.path(part.source), selection)
    else:
        raise CrystalError(f"unknown input part kind {part.kind!r}")


def iter_corpus(paths: Iterable[str], selection: Selection, skipped: Skipped) -> Iterator[Document]:
    """Every document of the paths, in order, in this process (see :func:`plan`)."""
    for part in plan(paths):
        yield from iter_documents(part, selection, skipped)


def _file_document(name: str, text: str, selection: Selection, skipped: Skipped) -> Document | None:
    language = canonical_name(resolve_lexer(None, name, text, guess=False))
    if language == GENERIC:
        skipped.append((name, "unknown language"))
        return None
    if selection.language and language != selection.language:
        return None
    return Document(name, text, language)


def _member_document(
    name: str, data: bytes, selection: Selection, skipped: Skipped
) -> Document | None:
    try:
        source = source_from_bytes(name, data, selection.max_bytes)
    except SkippedFile as exc:
        skipped.append((name, exc.reason))
        return None
    return _file_document(name, source.text, selection, skipped)


def _too_large(name: str, size: int, selection: Selection, skipped: Skipped) -> bool:
    if selection.max_bytes and size > selection.max_bytes:
        skipped.append((name, f"too large ({size:,} bytes > limit {selection.max_bytes:,})"))
        return True
    return False


def _zip_documents(part: Part, selection: Selection, skipped: Skipped) -> Iterator[Document]:
    try:
        with open_regular(part.path(part.source)) as raw, zipfile.ZipFile(raw) as archive:
            for member in part.names:
                name = f"{part.source}!/{member}"
                if _too_large(name, archive.getinfo(member).file_size, selection, skipped):
                    continue
                doc = _member_document(name, archive.read(member), selection, skipped)
                if doc is not None:
                    yield doc
    except SkippedFile as exc:
        raise CrystalError(f"{part.source}: not a readable zip archive ({exc.reason})") from None
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise CrystalError(f"{part.source}: not a readable zip archive ({exc})") from None


def _tar_documents(part: Part, selection: Selection, skipped: Skipped) -> Iterator[Document]:
    try:
        with (
            open_regular(part.path(part.source)) as raw,
            tarfile.open(fileobj=raw, mode="r:*") as archive,
        ):
            for index, member in enumerate(_tar_members(archive)):
                if index >= part.stop:
                    break
                if index < part.start:
                    continue
                name = f"{part.source}!/{member.name}"
                if _too_large(name, member.size, selection, skipped):
                    continue
                fh = archive.extractfile(member)
                data = fh.read() if fh is not None else b""
                doc = _member_document(name, data, selection, skipped)
                if doc is not None:
                    yield doc
    except SkippedFile as exc:
        raise CrystalError(f"{part.source}: not a readable tar archive ({exc.reason})") from None
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise CrystalError(f"{part.source}: not a readable tar archive ({exc})") from None


def _dataset_documents(part: Part, selection: Selection) -> Iterator[Document]:
    items: Iterable[tuple[str, str, str, str]]
    if part.start or part.stop != -1:
        items = _dataset_range(part)
    else:
        items = (
            (f"{part.source}#{item.id}", item.code, item.lang, item.split)
            for item in iter_items(part.path(part.source))
        )
    for name, code, lang, split in items:
        if selection.split and split != selection.split:
            continue
        language = selection.language or canonical_name(
            resolve_lexer(lang or None, None, code, guess=False)
        )
        yield Document(name, code, language)


def pair_documents(path: str, selection: Selection) -> Iterator[Document]:
    """The programs of a pair-labeled folder (those of ``split``'s pairs, ordered by id)."""
    data = load_pair_dataset(path)
    for i in data.programs(selection.split):
        code, lang = data.codes[i], data.langs[i]
        language = selection.language or canonical_name(
            resolve_lexer(lang or None, None, code, guess=False)
        )
        yield Document(f"{path}#{data.ids[i]}", code, language)


def _dataset_range(part: Part) -> Iterator[tuple[str, str, str, str]]:
    """``(name, code, lang, split)`` of the lines of a plain JSONL file starting in the range."""
    try:
        with open_regular(part.path(part.source)) as fh:
            offset = part.start
            if offset:
                fh.seek(offset - 1)
                offset += len(fh.readline()) - 1  # the rest of a line begun before the range
            while part.stop == -1 or offset < part.stop:
                line = fh.readline(MAX_DATA_BYTES + 2)
                if not line:
                    break
                if len(line.rstrip(b"\r\n")) > MAX_DATA_BYTES:
                    raise CrystalError(
                        f"{part.source}: line at byte {offset}: over {MAX_DATA_BYTES:,} bytes"
                    )
                where = offset
                offset += len(line)
                if not line.strip():
                    continue
                try:
                    row = loads(line.decode("utf-8"))
                    str(row["class"])
                    item = (
                        f"{part.source}#{row['id']}",
                        str(row["code"]),
                        str(row.get("lang", "")),
                        str(row.get("split", "")),
                    )
                except (ValueError, KeyError, TypeError) as exc:
                    raise CrystalError(
                        f"{part.source}: line at byte {where}: not a dataset line with id, "
                        f"class and code ({exc})"
                    ) from None
                yield item
    except (OSError, SkippedFile) as exc:
        raise CrystalError(f"{part.source}: unreadable dataset ({exc})") from None

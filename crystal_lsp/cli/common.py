"""Helpers shared by the subcommands: options, progress bars, output formats, reading inputs."""

from __future__ import annotations

import argparse
import codecs
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from crystal_lsp.clones.options import SCAN_SETTINGS
from crystal_lsp.distributed import ENGINES
from crystal_lsp.errors import CrystalError, int_in
from crystal_lsp.text.datafiles import check_writable
from crystal_lsp.text.sources import SkippedFile, read_lines, read_source

if TYPE_CHECKING:
    from crystal_lsp.text.tokens import Tokens

FORMATS = ("text", "json")
_WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def server_logging(log_file: str | None, verbose: int) -> None:
    """The log of a long-running server: ``--log-file`` or stderr (never stdout), ``-v`` levels."""
    handler: logging.Handler
    if log_file:
        try:
            handler = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            raise CrystalError(f"--log-file {log_file}: {exc.strerror}") from None
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(logging.DEBUG, logging.WARNING - 10 * verbose))


def setting_int(name: str) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in the range the settings table gives ``name``."""
    setting = SCAN_SETTINGS[name]
    assert setting.low is not None and setting.high is not None
    return int_in(int(setting.low), int(setting.high))


MAX_ITEM_BYTES = 16_000_000
"""The largest item (file, corpus line, dataset item) score, sset build and disting take.

Scoring and counting hold about 100 bytes per byte of code (token strings, ids and n-gram
tables; linear in the item's size), so this bounds one item at about 1.6 GB.
"""


def item_bytes(text: str) -> int:
    """An argparse ``type`` for ``--max-bytes``: 1..MAX_ITEM_BYTES, and 0 for that maximum."""
    value = int_in(0, MAX_ITEM_BYTES)(text)
    return value or MAX_ITEM_BYTES


def check_item_sizes(where: str, ids: list[str], codes: list[str], max_bytes: int) -> None:
    """The first item larger than ``max_bytes`` (UTF-8) is an error naming it and the option."""
    for ident, code in zip(ids, codes):
        if len(code) * 4 > max_bytes and len(code.encode("utf-8", "surrogatepass")) > max_bytes:
            raise CrystalError(
                f"{where}: item {ident!r} has {len(code.encode('utf-8', 'surrogatepass')):,} "
                f"bytes, over --max-bytes {max_bytes:,} (at most {MAX_ITEM_BYTES:,})"
            )


def warn_hash_seed(metrics: list[str]) -> None:
    """CodeBLEU's figures vary with Python's hash seed: say so when none is fixed."""
    if "codebleu" in metrics and not os.environ.get("PYTHONHASHSEED"):
        warn(
            "codebleu's scores vary slightly with Python's hash seed (the codebleu package "
            "iterates sets): set PYTHONHASHSEED=0 for reproducible figures"
        )


def check_output(path: str | None, option: str) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    if not path or path == "-":
        return
    parent = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise CrystalError(f"{option} {path}: is a directory")
    if not os.path.isdir(parent):
        raise CrystalError(f"{option} {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise CrystalError(f"{option} {path}: folder {parent} is not writable")
    check_writable(path, option)


def add_format(parser: argparse.ArgumentParser, formats: tuple[str, ...] = FORMATS) -> None:
    """``--format`` with the given choices (text first, the default)."""
    parser.add_argument(
        "--format",
        choices=formats,
        default=formats[0],
        help=f"output format (default: {formats[0]})",
    )


def add_engine_options(parser: argparse.ArgumentParser, work: str) -> None:
    """Add ``--engine local|dask`` and ``--scheduler ADDRESS``; ``work`` says what they run."""
    group = parser.add_argument_group("engine")
    group.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help=f"run {work} in local processes (default) or on a Dask cluster "
        "(needs crystal-lsp[dask]; without --scheduler, a local cluster of --jobs workers)",
    )
    group.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler to use, e.g. tcp://10.0.0.5:8786 (implies --engine dask; "
        "default: $DASK_SCHEDULER_ADDRESS, else a local cluster)",
    )


def add_progress(parser: argparse.ArgumentParser) -> None:
    """``--progress/--no-progress`` (default: on when stderr is a terminal)."""
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show progress bars on stderr (default: when stderr is a terminal)",
    )


def progress_enabled(args: argparse.Namespace) -> bool:
    """Whether to draw progress bars."""
    choice = getattr(args, "progress", None)
    return sys.stderr.isatty() if choice is None else bool(choice)


@contextmanager
def progress_bar(total: int | None, desc: str, enabled: bool) -> Iterator[Callable[[int], None]]:
    """A tqdm bar on stderr (a no-op when disabled); yields ``update(n)``."""
    if not enabled:
        yield lambda n: None
        return
    from tqdm import tqdm

    with tqdm(
        total=total, desc=desc, unit="", file=sys.stderr, leave=False, dynamic_ncols=True
    ) as bar:
        yield bar.update


def emit_json(doc: Any) -> None:
    """Write a JSON document to stdout."""
    from crystal_lsp.cli.jsonout import dumps_indented

    # one write: json.dump streams hundreds of thousands of small writes
    sys.stdout.write(dumps_indented(doc) + "\n")


def warn(message: str) -> None:
    """One warning line on stderr."""
    print(f"crystal-lsp: warning: {message}", file=sys.stderr)


def read_code(path: str, max_bytes: int) -> str:
    """A source file's text by the decoding policy; skipped files become usage errors."""
    try:
        source = read_source(path, max_bytes)
    except SkippedFile as exc:
        raise CrystalError(str(exc)) from None
    if source.replaced:
        warn(f"{path}: {source.replaced} undecodable byte sequence(s) replaced by U+FFFD")
    return source.text


_LINE_END = re.compile(r"\r\n|\r|\n")


def text_lines(text: str) -> list[str]:
    """The lines of a text file as ``open()`` reads them (``\\n``, ``\\r\\n`` or ``\\r`` end one).

    Not ``str.splitlines``: a form feed, a vertical tab or U+2028 in code (or raw in a JSON
    string) does not end a line.
    """
    lines = _LINE_END.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def corpus_lines(
    path: str, max_bytes: int, *, json_lines: bool = False
) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of the lines of a corpus file (``--lines``, ``--jsonl``), one at a time.

    Each line may hold at most ``max_bytes`` bytes (``--max-bytes``; 0: no limit). Text is
    UTF-8 (a byte-order mark dropped), undecodable bytes replaced by U+FFFD with one warning.
    Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (:func:`text_lines`), JSON lines only at
    ``\\n``.
    """
    replaced = 0
    number = 0
    try:
        for physical, raw in read_lines(path, max_bytes):
            if physical == 1 and raw.startswith(_WIDE_BOMS):
                raise CrystalError(f"{path}: UTF-16 or UTF-32 text; convert it to UTF-8")
            if physical == 1:
                raw = raw.removeprefix(codecs.BOM_UTF8)
            text = raw.decode("utf-8", "replace")
            if "\ufffd" in text:
                replaced += text.count("\ufffd") - raw.decode("utf-8", "ignore").count("\ufffd")
            pieces = [text.rstrip("\r\n")] if json_lines else text_lines(text)
            for piece in pieces:
                number += 1
                yield (physical if json_lines else number), piece
    except SkippedFile as exc:
        hint = " (raise --max-bytes to read it)" if "too long" in exc.reason else ""
        raise CrystalError(f"{exc}{hint}") from None
    if replaced:
        warn(f"{path}: {replaced} undecodable byte sequence(s) replaced by U+FFFD")


def tokenize_file(path: str, language: str | None, max_bytes: int, keep_comments: bool) -> Tokens:
    """Read and tokenize one file; empty token streams are an error."""
    from crystal_lsp.text.lexers import resolve_lexer
    from crystal_lsp.text.tokens import lex

    text = read_code(path, max_bytes)
    tokens = lex(text, resolve_lexer(language, path, text), keep_comments=keep_comments)
    if not tokens:
        raise CrystalError(f"{path}: no code tokens (the file is empty or only comments)")
    return tokens

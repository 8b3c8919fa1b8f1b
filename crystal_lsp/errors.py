"""The one domain exception of crystal_lsp, the exit codes, and the one error boundary.

:func:`run_guarded` is the boundary of every console script (``crystal-lsp``,
``python -m crystal_lsp``, ``crystal-clones``), in the spirit of pre-commit's
``error_handler``. It lives in this foundation module, not in :mod:`crystal_lsp.cli`, so that
the hook (an adapter of its own) uses it without importing the CLI.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Callable

from crystal_lsp.version import __version__

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


class CrystalError(ValueError):
    """A problem with the user's input or settings, reported as one clear line.

    It derives from ``ValueError`` so that code written against NLTK or the
    ``crystalbleu`` package, which raise ``ValueError`` for bad input, keeps working.
    """

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in ``[low, high]`` (else a usage error, exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in {low}..{high}, not {value}")
        return value

    return parse


JOBS = int_in(1, 1024)
"""The range of every ``--jobs`` (processes): a usage error beyond it, never a fork bomb."""


def install_command(extra: str) -> str:
    """The command that installs an extra of crystal-lsp into the running interpreter.

    crystal-lsp is installed from a checkout (or a wheel), not from a package index: pip's record
    of where it came from (``direct_url.json``) names that checkout, ``-e`` when it is editable.
    """
    import json
    import shlex
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    pip = f"{shlex.quote(sys.executable)} -m pip install"
    for dist in metadata.distributions(name="crystal-lsp"):
        try:
            origin = json.loads(dist.read_text("direct_url.json") or "null") or {}
        except ValueError:
            continue
        url = urlparse(str(origin.get("url", "")))
        source = unquote(url.path)
        if url.scheme == "file" and os.path.exists(source):
            editable = "-e " if origin.get("dir_info", {}).get("editable") else ""
            return f"{pip} {editable}{shlex.quote(f'{source}[{extra}]')}"
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.isfile(os.path.join(checkout, "pyproject.toml")):  # run from a checkout
        return f"{pip} -e {shlex.quote(f'{checkout}[{extra}]')}"
    return f"{pip} '.[{extra}]' (in the crystal-lsp checkout)"


def missing_extra(feature: str, extra: str, exc: ImportError | None = None) -> CrystalError:
    """The error of a feature whose optional dependencies are not installed, with the fix."""
    why = f" ({exc})" if exc is not None else ""
    return CrystalError(
        f"{feature} needs the {extra} extra{why}; install it with: {install_command(extra)}"
    )


def run_guarded(prog: str, work: Callable[[], int]) -> int:
    """Run a console script's ``work`` and map what escapes it to an exit code.

    :class:`CrystalError` gives its exit code and one line ``PROG: error: MESSAGE``;
    ``KeyboardInterrupt`` 130; a closed stdout (``| head``) 0, quietly; anything else 3 with
    the trace, worded so that it is never mistaken for a finding. ``SystemExit`` (argparse)
    passes through. Output never fails on odd file names: stdout and stderr escape what they
    cannot encode.
    """
    _escape_unencodable()
    _warnings_to_stderr(prog)
    try:
        return work()
    except CrystalError as exc:
        _say(f"{prog}: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say(f"{prog}: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_OK
    except Exception:
        _say(
            f"{prog}: internal error (crystal-lsp {__version__}), not a finding; "
            "please report it with this trace:"
        )
        traceback.print_exc(file=sys.stderr)
        return EXIT_INTERNAL


def _warnings_to_stderr(prog: str) -> None:
    """Library warnings (a cache that cannot be written, ...) as ``PROG: warning: ...`` lines."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)

    def lower(record: logging.LogRecord) -> bool:
        record.level = record.levelname.lower()
        return True

    handler.addFilter(lower)
    handler.setFormatter(logging.Formatter(f"{prog}: %(level)s: %(message)s"))
    root.addHandler(handler)


def _escape_unencodable() -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _discard_stdout() -> None:
    # Python flushes stdout again at exit; pointing it at /dev/null keeps that flush from
    # failing on the closed pipe too ("Exception ignored ... BrokenPipeError", exit 120).
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file descriptor (captured in tests, or no stdout): nothing to flush

"""``crystal-lsp serve``: the language server, over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import sys
from typing import Any

from crystal_lsp.cli.common import server_logging
from crystal_lsp.errors import CrystalError

log = logging.getLogger(__name__)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="run the language server (stdio, or --tcp HOST:PORT)",
        description="Run the crystal-lsp language server: near-duplicate diagnostics while "
        "editing and CrystalBLEU scoring of suggested code (crystal/score). It talks LSP on "
        "stdin/stdout unless --tcp is given; logs go to stderr or --log-file, never to stdout.",
        epilog="examples:\n  crystal-lsp serve\n  python -m crystal_lsp serve --log-file /tmp/crystal.log -v\n"
        "  crystal-lsp serve --tcp 127.0.0.1:2087",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--tcp",
        metavar="[HOST:]PORT",
        help="listen for one client at a time on this address (host 127.0.0.1 unless given). "
        "There is no authentication: anyone who can connect can use the server as you; keep it "
        "on loopback",
    )
    p.add_argument("--log-file", metavar="FILE", help="write the log to FILE instead of stderr")
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more log output (-v info, -vv debug, -vvv also pygls' messages)",
    )
    p.set_defaults(run=run)


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise CrystalError(f"--tcp needs [HOST:]PORT with a port in 1-65535, not {text!r}")
    host = host.strip("[]") or "127.0.0.1"
    if host not in ("127.0.0.1", "::1", "localhost"):
        log.warning("serving on %s without authentication: anyone who can connect may use it", host)
    return host, int(port)


def _logging(args: argparse.Namespace) -> None:
    server_logging(args.log_file, args.verbose)
    # pygls logs every message body at INFO
    logging.getLogger("pygls").setLevel(logging.DEBUG if args.verbose >= 3 else logging.WARNING)


def run(args: argparse.Namespace) -> int:
    address = _address(args.tcp) if args.tcp else None
    _logging(args)
    # Index builds use worker processes; never fork this multi-threaded process.
    try:
        multiprocessing.set_start_method("forkserver")
    except (RuntimeError, ValueError):
        pass
    from crystal_lsp.server import create_server

    server = create_server()
    if address is not None:
        server.start_tcp(*address)
        return 0
    # stdout belongs to the protocol: anything else that prints goes to stderr
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr
    server.start_io(sys.stdin.buffer, protocol_out)
    return 0

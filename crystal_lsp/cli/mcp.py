"""``crystal-lsp mcp [PATH]``: the Model Context Protocol server for coding agents, over stdio."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import multiprocessing
import os
from typing import Any

from crystal_lsp.cli.common import server_logging
from crystal_lsp.errors import JOBS, CrystalError, missing_extra


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="run the MCP server for coding agents (stdio)",
        description="Run crystal-lsp's Model Context Protocol server over stdin/stdout for the "
        "repository at PATH: tools check_duplication, score, file_clones, scan and "
        "trivially_shared. It indexes PATH in the background with the cache shared with scan, "
        "serve and the hook. Logs go to stderr or --log-file, never to stdout.",
        epilog="examples:\n  crystal-lsp mcp\n  claude mcp add crystal -- crystal-lsp mcp .\n"
        "  crystal-lsp mcp ~/src/project --log-file /tmp/crystal-mcp.log -v",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", nargs="?", default=".", help="repository root (default: .)")
    p.add_argument("--log-file", metavar="FILE", help="write the log to FILE instead of stderr")
    p.add_argument("--jobs", type=JOBS, default=None, help="tokenizer processes for a cold index")
    p.add_argument(
        "--wait",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long a tool call waits for the first index before it answers with the "
        "indexing's progress and when to call again (default: $CRYSTAL_LSP_MCP_WAIT or 5)",
    )
    p.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-v info, -vv debug)"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not os.path.isdir(args.path):
        raise CrystalError(f"{args.path}: not a directory")
    if args.jobs is not None and args.jobs < 1:
        raise CrystalError("--jobs must be at least 1")
    wait = _wait_seconds(args.wait)
    if importlib.util.find_spec("mcp") is None:
        raise missing_extra("crystal-lsp mcp", "mcp", ModuleNotFoundError("no module named 'mcp'"))
    # The SDK takes about 0.9 s of CPU to import: the front answers the handshake meanwhile.
    # CRYSTAL_LSP_MCP_FRONT=0 leaves all of it to the SDK (the tests record its answers so).
    front = None
    if os.environ.get("CRYSTAL_LSP_MCP_FRONT", "1") != "0":
        from crystal_lsp.mcp.front import Front, load_handshake

        front = Front.claim_stdio(load_handshake())
        front.start()
    try:
        import anyio

        from crystal_lsp.mcp import Workspace, create_server
        from crystal_lsp.mcp.transport import serve_stdio
    except ImportError as exc:
        raise missing_extra("crystal-lsp mcp", "mcp", exc) from None
    # Index builds use worker processes; never fork this multi-threaded process.
    try:
        multiprocessing.set_start_method("forkserver")
    except (RuntimeError, ValueError):
        pass
    workspace = Workspace(args.path, jobs=args.jobs, wait=wait)
    server = create_server(workspace)
    server_logging(args.log_file, args.verbose)  # after the SDK's own, so that ours wins
    workspace.start()  # indexing in the background; the tools wait for it
    try:
        # the SDK's stdio transport behind the frame guard: on the front's pipes, else on fd 0
        # and 1, pointing fd 1 at stderr while it serves; either way stdout is protocol only
        with front.sdk_stdio() if front is not None else contextlib.nullcontext():
            anyio.run(serve_stdio, server)
    finally:
        workspace.close()
    return 0


def _wait_seconds(given: float | None) -> float:
    """``--wait``, else ``$CRYSTAL_LSP_MCP_WAIT``, else 5 s; a usage error when not a duration."""
    if given is None:
        raw = os.environ.get("CRYSTAL_LSP_MCP_WAIT", "").strip()
        try:
            given = float(raw) if raw else 5.0
        except ValueError:
            raise CrystalError(f"CRYSTAL_LSP_MCP_WAIT={raw!r}: not a number of seconds") from None
    if not 0 <= given < float("inf"):
        raise CrystalError(f"--wait {given}: must be a number of seconds, 0 or more")
    return given

"""The MCP handshake answered before the SDK is loaded, so that ``crystal-lsp mcp`` starts fast.

Importing the official SDK (the pydantic models of every protocol revision) costs about 0.9 s of
CPU, and an agent waits for ``initialize`` and ``tools/list`` before it can do anything. The
front owns the process's stdin and stdout from the first moment (fd 1 then points at stderr, fd
0 at the null device, as the SDK's own stdio transport does), reads the protocol on its own
thread and, until the SDK server runs, answers three requests itself from ``handshake.json``:
``initialize`` (a handshake-era protocol version; anything else goes to the SDK), then
``tools/list`` and ``ping``. ``handshake.json`` is the SDK server's own answers, recorded from
the real server and checked against it by the tests; it is used only with the SDK version it
was recorded with.

Every other message goes to the SDK server, in arrival order, through a pipe that serves as its
stdin (the SDK's public stdio transport, unchanged); the client's ``initialize`` goes first
under a private id, so that the SDK's session is initialized as the client's is, and the answer
to it is dropped. The SDK's messages come back through a pipe that serves as its stdout and are
written to the real stdout by the front's one writer.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import threading
from collections.abc import Iterator
from importlib import metadata, resources
from typing import Any, BinaryIO

from crystal_lsp.version import __version__

log = logging.getLogger(__name__)

REPLAY_ID = "crystal-lsp-front:initialize"
"""The id under which the client's ``initialize`` is replayed to the SDK."""
HANDSHAKE_FILE = "handshake.json"


def load_handshake() -> dict[str, Any] | None:
    """The recorded answers, if they were recorded with this crystal-lsp and SDK version."""
    try:
        text = resources.files("crystal_lsp.mcp").joinpath(HANDSHAKE_FILE).read_text("utf-8")
        doc = json.loads(text)
        current = {"crystal_lsp": __version__, "mcp": metadata.version("mcp")}
    except (OSError, ValueError, metadata.PackageNotFoundError):
        return None
    if not isinstance(doc, dict) or any(doc.get(k) != v for k, v in current.items()):
        log.info("handshake.json is not for this version: the SDK answers the handshake")
        return None
    return doc


def _valid_initialize(params: Any) -> bool:
    """Whether ``initialize`` params are what the SDK accepts (else it answers the error)."""
    if not isinstance(params, dict):
        return False
    client = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(client, dict)
        and isinstance(client.get("name"), str)
        and isinstance(client.get("version"), str)
    )


def _protocol(line: bytes) -> tuple[dict[str, Any] | None, bytes]:
    """The JSON-RPC message of a line the SDK wrote, and the line without stray output.

    sys.stdout is the SDK's pipe while it serves, so a stray ``print`` lands there: text
    without a newline before a message is cut off, anything else kept off the wire (logged).
    """
    start = line.find(b'{"jsonrpc"')
    if start < 0:
        start = 0
    try:
        message = json.loads(line[start:])
    except ValueError:
        message = None
    if not isinstance(message, dict) or "jsonrpc" not in message:
        log.warning("not a protocol message, kept off stdout: %r", line[:200])
        return None, line
    if start:
        log.warning("stray output kept off stdout: %r", line[:start][:200])
    return message, line[start:]


class Front:
    """Owns the protocol streams; answers the handshake until the SDK serves (:meth:`sdk_stdio`)."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, handshake: dict[str, Any] | None) -> None:
        self._in, self._out = stdin, stdout
        self._handshake = handshake
        self._write_lock = threading.Lock()
        self._state = threading.Lock()
        self._initialized = False
        self._sdk_running = False
        self._sent_initialize: dict[str, Any] | None = None
        to_sdk_r, to_sdk_w = os.pipe()
        self._to_sdk = open(to_sdk_w, "wb")
        self._from_sdk, from_sdk_w = os.pipe()
        # the SDK's stdin and stdout (plain pipes: its transport serves them in place)
        self.sdk_stdin = io.TextIOWrapper(open(to_sdk_r, "rb"), encoding="utf-8", errors="replace")
        self.sdk_stdout = io.TextIOWrapper(open(from_sdk_w, "wb"), encoding="utf-8")
        self._threads = [
            threading.Thread(target=self._read, name="mcp-front-in", daemon=True),
            threading.Thread(target=self._relay, name="mcp-front-out", daemon=True),
        ]

    @classmethod
    def claim_stdio(cls, handshake: dict[str, Any] | None) -> Front:
        """A front on the process's stdin and stdout; fd 0 and 1 no longer reach the client."""
        stdin = os.fdopen(os.dup(0), "rb")
        stdout = os.fdopen(os.dup(1), "wb")
        sys.stdout.flush()
        os.dup2(2, 1)  # stray output of anything in this process goes to stderr
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        return cls(stdin, stdout, handshake)

    def start(self) -> None:
        """Start reading the client's messages (answering the handshake from now on)."""
        for thread in self._threads:
            thread.start()

    @contextlib.contextmanager
    def sdk_stdio(self) -> Iterator[None]:
        """While the SDK server runs, its stdin and stdout are the front's pipes.

        Every message goes to it; its last messages are delivered on exit.
        """
        with self._state:
            self._sdk_running = True
        saved = sys.stdin, sys.stdout
        sys.stdin, sys.stdout = self.sdk_stdin, self.sdk_stdout
        try:
            yield
        finally:
            sys.stdin, sys.stdout = saved
            self.sdk_stdout.close()  # end of the SDK's output: the relay sends the rest and ends
            self._threads[1].join(timeout=10)

    # ------------------------------------------------------------------ client -> us or SDK
    def _read(self) -> None:
        try:
            for line in self._in:
                if not self._answered(line):
                    self._forward(line)
        except (OSError, ValueError) as exc:  # the client went away, or the SDK's side closed
            log.debug("the front stopped reading: %s", exc)
        finally:
            with contextlib.suppress(OSError):
                self._to_sdk.close()  # end of input for the SDK: it shuts down

    def _forward(self, line: bytes) -> None:
        self._to_sdk.write(line if line.endswith(b"\n") else line + b"\n")
        self._to_sdk.flush()

    def _answered(self, line: bytes) -> bool:
        """Answer a handshake request while the SDK is not running (False: forward it)."""
        with self._state:
            if self._sdk_running or self._handshake is None:
                return False
            try:
                message = json.loads(line)
            except ValueError:
                return False
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                return False
            method, ident = message.get("method"), message.get("id")
            if not isinstance(ident, (str, int)) or isinstance(ident, bool):
                return False
            if method == "initialize" and not self._initialized:
                return self._initialize(message)
            if method == "tools/list" and self._initialized and not message.get("params"):
                self._send({"jsonrpc": "2.0", "id": ident, "result": self._handshake["tools"]})
                return True
            if method == "ping" and self._initialized:
                self._send({"jsonrpc": "2.0", "id": ident, "result": {}})
                return True
            return False

    def _initialize(self, message: dict[str, Any]) -> bool:
        assert self._handshake is not None
        params = message.get("params")
        if not isinstance(params, dict) or not _valid_initialize(params):
            return False
        requested = params["protocolVersion"]
        versions = self._handshake["versions"]
        version = requested if requested in versions else self._handshake["latest"]
        result = {"protocolVersion": version, **self._handshake["initialize"]}
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        self._sent_initialize = result
        self._initialized = True
        self._forward(json.dumps({**message, "id": REPLAY_ID}, ensure_ascii=False).encode())
        return True

    # ------------------------------------------------------------------ SDK -> client
    def _relay(self) -> None:
        with open(self._from_sdk, "rb") as sdk:
            for line in sdk:
                message, line = _protocol(line)
                if message is not None and not self._replay_answer(message, line):
                    self._send_line(line)

    def _replay_answer(self, message: dict[str, Any], line: bytes) -> bool:
        """Whether this is the SDK's answer to the replayed ``initialize`` (dropped)."""
        if message.get("id") != REPLAY_ID:
            return False
        if message.get("result") != self._sent_initialize:
            log.warning("the SDK answered initialize otherwise than handshake.json: %s", line[:500])
        return True

    def _send(self, message: dict[str, Any]) -> None:
        self._send_line(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")

    def _send_line(self, line: bytes) -> None:
        with self._write_lock:
            try:
                self._out.write(line if line.endswith(b"\n") else line + b"\n")
                self._out.flush()
            except (OSError, ValueError) as exc:  # the client closed its end
                log.debug("cannot write to the client: %s", exc)

"""The e2e harness: code samples, a recording LSP client session and a server launcher.

Imported by the e2e tests (a plainly named module: ``conftest`` is ambiguous across folders).
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from scan_samples import MERGE_INTERVALS

WAIT = 60.0

PROFILES = {
    "vscode": lambda: client_capabilities("visual-studio-code"),
    "neovim-0.7": lambda: client_capabilities("neovim@v0.7.0"),
    "neovim": lambda: client_capabilities("neovim"),
    "emacs": lambda: client_capabilities("emacs"),
    "bare": types.ClientCapabilities,
}


# ---------------------------------------------------------------------- code samples
DUP_A = MERGE_INTERVALS

DUP_B = '''\
import os


def combine_ranges(ranges):
    """Combine ranges that overlap."""
    items = sorted(ranges, key=lambda item: item[0])
    out = []
    for lo, hi in items:
        if out and lo <= out[-1][1]:
            prev_lo, prev_hi = out[-1]
            out[-1] = (prev_lo, max(prev_hi, hi))
        else:
            out.append((lo, hi))
    size = 0
    for lo, hi in out:
        size += hi - lo
    return out, size
'''

UNRELATED = '''\
class Greeter:
    """Say hello in several languages."""

    def __init__(self, name, language="en"):
        self.name = name
        self.language = language
        self.greetings = {"en": "Hello", "fr": "Bonjour", "de": "Hallo"}

    def greet(self):
        word = self.greetings.get(self.language, "Hello")
        return f"{word}, {self.name}!"
'''


def dedent(text: str) -> str:
    return textwrap.dedent(text)


def plain(value: Any) -> Any:
    """pygls' client turns JSON objects of untyped results into named tuples: undo that."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


# ---------------------------------------------------------------------- the session
@dataclass
class Session:
    """A client connected to a running server, with what it has received."""

    client: LanguageClient
    root: Path
    published: list[types.PublishDiagnosticsParams] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    registrations: list[types.Registration] = field(default_factory=list)
    configuration: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    initialize_result: types.InitializeResult | None = None
    lens_refreshes: int = 0

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    async def wait(self, predicate: Callable[[], Any], what: str, timeout: float = WAIT) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if self.client._stop_event.is_set() or loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.02)

    async def ready(self) -> dict[str, Any]:
        return await self.wait(
            lambda: next((s for s in self.statuses if s["state"] in ("ready", "error")), None),
            "indexing to finish",
        )

    def open(self, rel: str, text: str | None = None, language_id: str = "python") -> str:
        uri = self.uri(rel)
        if text is None:
            text = (self.root / rel).read_text(encoding="utf-8")
        self.versions[uri] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language_id, version=1, text=text
                )
            )
        )
        return uri

    def change(self, uri: str, text: str) -> int:
        version = self.versions[uri] = self.versions[uri] + 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return version

    def edit(self, uri: str, rng: types.Range, text: str) -> int:
        version = self.versions[uri] = self.versions[uri] + 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(range=rng, text=text)],
            )
        )
        return version

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def diagnostics(self, uri: str, version: int | None = None) -> list[types.Diagnostic]:
        """The diagnostics published for ``uri`` at ``version`` (default: its current one)."""
        wanted = self.versions.get(uri) if version is None else version
        params = await self.wait(
            lambda: next(
                (p for p in reversed(self.published) if p.uri == uri and p.version == wanted),
                None,
            ),
            f"diagnostics of {uri} version {wanted}",
        )
        return list(params.diagnostics)

    def publications(self, uri: str) -> list[types.PublishDiagnosticsParams]:
        return [p for p in self.published if p.uri == uri]

    async def lenses(self, uri: str) -> list[types.CodeLens]:
        return list(
            await self.client.text_document_code_lens_async(
                types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            or []
        )

    async def lens(
        self, uri: str, predicate: Callable[[types.CodeLens], bool] = lambda _: True
    ) -> types.CodeLens:
        """The first code lens of ``uri`` that satisfies ``predicate``.

        Asked for again whenever the server asks for a refresh (and every second, for clients
        without refresh support).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT
        while True:
            seen, asked = self.lens_refreshes, loop.time()
            found = [lens for lens in await self.lenses(uri) if predicate(lens)]
            if found:
                return found[0]
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for a code lens of {uri}")
            await self.wait(
                lambda seen=seen, asked=asked: (
                    self.lens_refreshes > seen or loop.time() > asked + 1.0
                ),
                f"a code lens refresh for {uri}",
            )

    async def command(self, name: str, *arguments: Any) -> Any:
        return plain(
            await self.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=name, arguments=list(arguments))
            )
        )

    async def request(self, method: str, params: Any) -> Any:
        return plain(await self.client.protocol.send_request_async(method, params))


def _converter() -> Any:
    """pygls' converter, with lsprotocol's ``Command | CodeAction`` hook fixed.

    lsprotocol 2025.0.0 structures every object with a ``command`` key as a ``Command``, so a
    ``CodeAction`` carrying a command loses its kind and diagnostics; the spec tells them apart
    by the type of ``command`` (a string only in a ``Command``).
    """
    converter = default_converter()

    def hook(value: Any, _: type) -> Any:
        if isinstance(value.get("command"), str):
            return converter.structure(value, types.Command)
        return converter.structure(value, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, hook)
    return converter


def _client(session_box: dict[str, Session]) -> LanguageClient:
    client = LanguageClient(converter_factory=_converter)
    features = {
        k: v
        for k, v in DEFAULT_CLIENT_FEATURES.items()
        if k not in (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.WORKSPACE_CONFIGURATION)
    }
    register_lsp_features(client, features)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        session_box["session"].published.append(params)

    @client.feature("crystal/status")
    def status(client: LanguageClient, params: Any) -> None:
        session_box["session"].statuses.append(plain(params))

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(client: LanguageClient, params: types.RegistrationParams) -> None:
        session_box["session"].registrations.extend(params.registrations)

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(client: LanguageClient, params: Any) -> None:
        session_box["session"].lens_refreshes += 1

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(client: LanguageClient, params: types.ConfigurationParams) -> list[Any]:
        settings = session_box["session"].configuration
        return [settings if item.section == "crystalLsp" else None for item in params.items]

    return client


@dataclass
class Launcher:
    """Starts sessions (a test may need several servers, e.g. a warm restart)."""

    tmp_path: Path
    cache: Path
    sessions: list[Session] = field(default_factory=list)

    def workspace(self, files: dict[str, str], name: str = "ws") -> Path:
        root = self.tmp_path / name
        root.mkdir(parents=True, exist_ok=True)
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return root

    async def start(
        self,
        root: Path,
        *,
        profile: str = "vscode",
        configuration: dict[str, Any] | None = None,
        init_settings: dict[str, Any] | None = None,
        initialization_options: Any = None,
        env: dict[str, str] | None = None,
        capabilities: types.ClientCapabilities | None = None,
        folders: list[Path] | None = None,
    ) -> Session:
        box: dict[str, Session] = {}
        client = _client(box)
        session = Session(client, root, configuration=dict(configuration or {}))
        box["session"] = session
        server_env = {
            **os.environ,
            "CRYSTAL_LSP_CACHE_DIR": str(self.cache),
            "GIT_CEILING_DIRECTORIES": str(self.tmp_path),
            **(env or {}),
        }
        await client.start_io(sys.executable, "-m", "crystal_lsp", "serve", "-v", env=server_env)
        options = initialization_options
        if options is None and init_settings is not None:
            options = {"settings": init_settings}
        roots = folders or [root]
        session.initialize_result = await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities or PROFILES[profile](),
                root_uri=roots[0].as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in roots
                ],
                initialization_options=options,
            )
        )
        self.sessions.append(session)
        return session

    async def stop(self, session: Session) -> None:
        if session in self.sessions:
            self.sessions.remove(session)
        try:
            await asyncio.wait_for(session.client.shutdown_session(), 30)
        finally:
            await session.client.stop()


def copy_range(diag: types.Diagnostic) -> types.Range:
    """The whole range of a flagged copy: a unit copied whole is underlined on its header line
    and its full range is the last related entry ("this copy: ...")."""
    for related in diag.related_information or []:
        if related.message.startswith("this copy:"):
            return related.location.range
    return diag.range


def other_copies(diag: types.Diagnostic) -> list[types.DiagnosticRelatedInformation]:
    """The related entries naming the other copies (not the copy's own full range)."""
    return [r for r in diag.related_information or [] if not r.message.startswith("this copy:")]

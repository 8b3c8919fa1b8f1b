"""LSP handlers, commands and the ``crystal/score`` request of :class:`CrystalServer`.

Handlers name their first parameter ``ls`` (pygls injects the server by that name) and stay thin:
they validate, then hand the work to the server or to a folder's worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Mapping
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from crystal_lsp.errors import CrystalError
from crystal_lsp.server.actions import SHOW_DOCUMENT, code_actions
from crystal_lsp.server.app import CrystalServer
from crystal_lsp.server.diagnostics import LocationRanges
from crystal_lsp.server.hover import hover_markdown
from crystal_lsp.server.positions import TextIndex
from crystal_lsp.server.scoring import (
    Piece,
    ScoreError,
    make_piece,
    parse_metrics,
    parse_range,
    reference_specs,
    resolve_language,
    score_pieces,
    sset_for,
)
from crystal_lsp.server.settings import SECTION
from crystal_lsp.server.workspace import Folder, submit
from crystal_lsp.text.sources import SkippedFile, read_source

log = logging.getLogger(__name__)

SCORE = "crystal/score"
SCORE_SELECTION = "crystal.scoreSelection"
SCORE_TEXT = "crystal.scoreText"
SHOW_TRIVIAL = "crystal.showTrivialNgrams"
REBUILD = "crystal.rebuildIndex"


def register(server: CrystalServer) -> None:
    """Register every handler on ``server``."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: CrystalServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        settings = None
        if isinstance(options, dict):
            # {"settings": {...}}, or {"crystalLsp": {...}} as Helix sends its `config`
            settings = options.get("settings", options.get(SECTION))
        if options is not None and not isinstance(options, dict):
            ls.tell_once("initializationOptions must be an object; ignored")
        ls.init_settings = settings

    @server.feature(types.INITIALIZED)
    async def initialized(ls: CrystalServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        uris = list(ls.workspace.folders)
        if not uris and ls.workspace.root_uri:
            uris = [ls.workspace.root_uri]
        try:
            await ls.pull_settings(uris)
            for uri in uris:
                ls.add_folder(uri)
        finally:
            ls.initialized.set()
        await _register_capabilities(ls)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: CrystalServer, params: Any) -> None:
        ls.stopping = True
        for state in ls.docs.values():
            if state.task is not None:
                state.task.cancel()
        for job in ls.builds.values():
            job.superseded = True
            job.cancel.set()
        for folder in list(ls.folders.values()):
            try:
                await asyncio.wait_for(submit(folder, folder.save_scores), 10)
            except Exception as exc:  # best effort: the next start scores again
                log.info("could not save the pair scores of %s: %s", folder.name, exc)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CrystalServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, delay=0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CrystalServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: CrystalServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.disk_changed({params.text_document.uri: {types.FileChangeType.Changed}})

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CrystalServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: CrystalServer, params: types.DidChangeWatchedFilesParams) -> None:
        changes: dict[str, set[types.FileChangeType]] = {}
        for change in params.changes:
            changes.setdefault(change.uri, set()).add(change.type)
        ls.disk_changed(changes)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration(ls: CrystalServer, params: types.DidChangeConfigurationParams) -> None:
        if ls._caps("workspace", "configuration"):
            await ls.pull_settings()
        else:
            ls.apply_settings_from(params.settings)
        await ls.reconfigure()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders(ls: CrystalServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed:
            ls.remove_folder(removed.uri)
        added = [f.uri for f in params.event.added]
        if added:
            await ls.pull_settings([*ls.folders, *added])
        for uri in added:
            ls.add_folder(uri)
        for uri in list(ls.docs):
            if ls.open_document(uri) is not None:
                ls.schedule(uri, delay=0.0)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: CrystalServer, params: types.HoverParams) -> types.Hover | None:
        state = ls.docs.get(params.text_document.uri)
        if state is None or state.result is None or state.index is None or not state.flags:
            return None
        offset = state.index.offset_at(params.position)
        hits = [f for f in state.flags if f.start <= offset <= f.end]
        if not hits:
            return None
        flag = min(hits, key=lambda f: (f.end - f.start, f.start))
        folder = ls.folder_for(state.uri)
        text = await submit(folder, hover_markdown, folder, state.result, flag)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
            range=flag.range,
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def actions(ls: CrystalServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        state = ls.docs.get(params.text_document.uri)
        if state is None or state.result is None or state.index is None or not state.flags:
            return []
        folder = ls.folder_for(state.uri)
        ranges = LocationRanges(folder, ls.workspace.position_codec)
        return await submit(
            folder,
            code_actions,
            ranges,
            state.uri,
            state.index,
            state.flags,
            params.range,
            list(params.context.diagnostics),
            state.result.language,
        )

    @server.command(SHOW_DOCUMENT)
    async def show_document(ls: CrystalServer, *args: Any) -> Any:
        if len(args) != 2 or not isinstance(args[0], str):
            raise JsonRpcInvalidParams("expected arguments [uri, range]")
        try:
            selection = parse_range(args[1])
        except ScoreError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        if not ls._caps("window", "show_document", "support"):
            return {"uri": args[0], "range": args[1], "shown": False}
        shown = await ls.window_show_document_async(
            types.ShowDocumentParams(uri=args[0], take_focus=True, selection=selection)
        )
        return {"uri": args[0], "range": args[1], "shown": bool(shown and shown.success)}

    @server.feature(SCORE)
    async def score(ls: CrystalServer, params: Any) -> dict[str, Any]:
        return await _score(ls, _mapping(params, SCORE))

    @server.command(SCORE_SELECTION)
    async def score_selection(ls: CrystalServer, *args: Any) -> dict[str, Any]:
        arg = _single(args, SCORE_SELECTION)
        if not isinstance(arg.get("uri"), str) or "range" not in arg:
            raise JsonRpcInvalidParams(f"{SCORE_SELECTION}: expected {{uri, range, references}}")
        return await _score(
            ls,
            {
                "hypothesis": {"uri": arg["uri"], "range": arg["range"]},
                "references": arg.get("references", "auto"),
                "language": arg.get("language"),
                "metrics": arg.get("metrics"),
            },
        )

    @server.command(SCORE_TEXT)
    async def score_text(ls: CrystalServer, *args: Any) -> dict[str, Any]:
        arg = _single(args, SCORE_TEXT)
        if not isinstance(arg.get("text"), str):
            raise JsonRpcInvalidParams(f"{SCORE_TEXT}: expected {{text, language, references}}")
        return await _score(
            ls,
            {
                "hypothesis": {"text": arg["text"]},
                "references": arg.get("references", "auto"),
                "language": arg.get("language"),
                "metrics": arg.get("metrics"),
            },
        )

    @server.command(SHOW_TRIVIAL)
    async def show_trivial(ls: CrystalServer, *args: Any) -> dict[str, Any]:
        arg = _single(args, SHOW_TRIVIAL)
        top = arg.get("top", 50)
        if not isinstance(top, int) or isinstance(top, bool) or top < 0:
            raise JsonRpcInvalidParams(f"{SHOW_TRIVIAL}: top must be a whole number >= 0")
        try:
            language = resolve_language(arg.get("language"), None, "")
        except ScoreError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        if not arg.get("language"):
            raise JsonRpcInvalidParams(f"{SHOW_TRIVIAL}: language is required")
        folder = _folder_with(ls, language)
        await ls.ready(folder)
        sset = await submit(folder, sset_for, folder, language)
        return {
            "language": language,
            "k": sset.k,
            "fingerprint": sset.fingerprint(),
            "ngrams": [{"ngram": list(g), "count": int(c)} for g, c in sset.top(top)],
        }

    @server.command(REBUILD)
    async def rebuild(ls: CrystalServer, *args: Any) -> dict[str, Any]:
        started = time.perf_counter()
        folders = list(ls.folders.values())
        tasks = [ls.start_build(folder) for folder in folders]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        files = sum(
            sum(1 for s in folder.index.files.values() if not s.override) for folder in folders
        )
        return {"files": files, "seconds": round(time.perf_counter() - started, 3)}


async def _register_capabilities(ls: CrystalServer) -> None:
    registrations = []
    if ls._caps("workspace", "did_change_configuration", "dynamic_registration"):
        registrations.append(
            types.Registration(
                id=str(uuid.uuid4()),
                method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION),
            )
        )
    if ls._caps("workspace", "did_change_watched_files", "dynamic_registration"):
        registrations.append(
            types.Registration(
                id=str(uuid.uuid4()),
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
                ),
            )
        )
    if not registrations:
        return
    try:
        await ls.client_register_capability_async(
            types.RegistrationParams(registrations=registrations)
        )
    except Exception as exc:
        log.info("client/registerCapability failed: %s", exc)


def _mapping(params: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(params, Mapping):
        raise JsonRpcInvalidParams(f"{what}: parameters must be an object")
    return params


def _single(args: tuple[Any, ...], what: str) -> Mapping[str, Any]:
    if len(args) != 1 or not isinstance(args[0], Mapping):
        raise JsonRpcInvalidParams(f"{what}: expected one object argument")
    return args[0]


def _folder_with(ls: CrystalServer, language: str) -> Folder:
    """The folder with the most indexed files of a language (else the first, else detached)."""
    best: Folder | None = None
    count = -1
    for folder in ls.folders.values():
        n = sum(1 for s in folder.index.files.values() if s.entry.language == language)
        if n > count:
            best, count = folder, n
    if best is not None:
        return best
    return ls.folder_for("untitled:crystal")


def _main_language(folder: Folder) -> str | None:
    counts: dict[str, int] = {}
    for state in folder.index.files.values():
        if not state.override:
            counts[state.entry.language] = counts.get(state.entry.language, 0) + 1
    return max(sorted(counts), key=lambda k: counts[k]) if counts else None


def _spec_text(
    ls: CrystalServer, spec: Mapping[str, Any], what: str
) -> tuple[str, str | None, str]:
    """``(text, uri, language id)`` of a hypothesis or reference spec (loop thread)."""
    if "text" in spec:
        if not isinstance(spec["text"], str):
            raise ScoreError(f"{what}: text must be a string")
        return spec["text"], None, ""
    uri = spec.get("uri")
    if not isinstance(uri, str):
        raise ScoreError(f"{what}: needs text or uri")
    doc = ls.open_document(uri)
    if doc is not None:
        return doc.source, uri, doc.language_id or ""
    path = to_fs_path(uri)
    if path is None:
        raise ScoreError(f"{what}: {uri} is neither open nor a file")
    try:
        return read_source(path).text, uri, ""
    except SkippedFile as exc:
        raise ScoreError(f"{what}: {exc}") from None


async def _score(ls: CrystalServer, params: Mapping[str, Any]) -> dict[str, Any]:
    try:
        return await _score_or_fail(ls, params)
    except (ScoreError, CrystalError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


async def _score_or_fail(ls: CrystalServer, params: Mapping[str, Any]) -> dict[str, Any]:
    spec = params.get("hypothesis")
    if not isinstance(spec, Mapping):
        raise ScoreError("hypothesis must be an object with text or uri (and range)")
    refs = reference_specs(params.get("references"))
    metrics = parse_metrics(params.get("metrics"))
    text, uri, language_id = _spec_text(ls, spec, "hypothesis")
    rng = parse_range(spec["range"]) if spec.get("range") is not None else None
    filename = os.path.basename(to_fs_path(uri) or "") if uri else None
    language = resolve_language(params.get("language") or None, filename, text)
    if not params.get("language") and language == "generic" and language_id:
        language = resolve_language(language_id, None, text)
    codec = ls.workspace.position_codec
    folder = ls.folder_for(uri) if uri else _folder_with(ls, language)
    await ls.ready(folder)
    if not params.get("language") and language == "generic":
        # too little text to tell: the language most of the folder is written in
        language = _main_language(folder) or language
    hypothesis = make_piece("hypothesis", uri, text, rng, language, codec)
    pieces: list[Piece] = []
    for k, ref in enumerate(refs or []):
        ref_text, ref_uri, _ = _spec_text(ls, ref, f"references[{k}]")
        ref_range = parse_range(ref["range"]) if ref.get("range") is not None else None
        label = ref.get("label") if isinstance(ref.get("label"), str) else None
        pieces.append(
            make_piece(
                label or (ref_uri or f"reference {k + 1}"),
                ref_uri,
                ref_text,
                ref_range,
                language,
                codec,
            )
        )
    skip: tuple[str, int, int] | None = None
    if uri is not None and refs is None:
        path, _ = folder.display_path(uri, to_fs_path(uri))
        index = TextIndex(text, codec)
        if rng is None:
            skip = (path, 1, 10**9)
        else:
            skip = (
                path,
                index.core_line(index.offset_at(rng.start)),
                index.core_line(index.offset_at(rng.end)),
            )

    def work() -> dict[str, Any]:
        started = time.perf_counter()
        sset = sset_for(folder, language)
        references = pieces
        if refs is None:
            crystal = ls.auto.metric(folder, language, sset)
            references = ls.auto.find(folder, language, hypothesis, crystal, skip, codec)
        result = score_pieces(hypothesis, references, sset, folder, language, metrics)
        log.debug("scored in %.1f ms", (time.perf_counter() - started) * 1000)
        return result

    return await submit(folder, work)

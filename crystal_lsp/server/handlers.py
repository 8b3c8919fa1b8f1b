"""LSP handlers, commands and the ``crystal/score`` request of :class:`CrystalServer`.

Handlers are module-level functions that validate their parameters and hand the work to the
server's parts (documents, folders, indexer, ...) or to a folder's worker thread. ``@_feature``
and ``@_command`` only record them; :func:`register` puts them on a server, so every
``create_server()`` gets a fresh, fully registered one. Handlers name their first parameter
``ls`` (pygls injects the server by that name), and their annotations are imported at runtime
because pygls structures command arguments from them.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from crystal_lsp.server import score_request
from crystal_lsp.server.actions import SHOW_DOCUMENT, code_actions
from crystal_lsp.server.app import CrystalServer
from crystal_lsp.server.compare import COMPARE, compare_texts, resolve_id
from crystal_lsp.server.diagnostics import LocationRanges
from crystal_lsp.server.hover import hover_markdown
from crystal_lsp.server.scoring import ScoreError, parse_range, resolve_language, sset_for
from crystal_lsp.server.settings import SECTION
from crystal_lsp.server.workspace import submit

log = logging.getLogger(__name__)

SCORE = "crystal/score"
SCORE_SELECTION = "crystal.scoreSelection"
SCORE_TEXT = "crystal.scoreText"
SHOW_TRIVIAL = "crystal.showTrivialNgrams"
REBUILD = "crystal.rebuildIndex"
INSERTIONS = "crystal/insertions"
SHOW_INSERTIONS = "crystal.insertions"

Handler = TypeVar("Handler", bound=Callable[..., Any])

_FEATURES: list[tuple[str, Any, Callable[..., Any]]] = []
_COMMANDS: list[tuple[str, Callable[..., Any]]] = []


def _feature(method: str, options: Any = None) -> Callable[[Handler], Handler]:
    def record(handler: Handler) -> Handler:
        _FEATURES.append((method, options, handler))
        return handler

    return record


def _command(name: str) -> Callable[[Handler], Handler]:
    def record(handler: Handler) -> Handler:
        _COMMANDS.append((name, handler))
        return handler

    return record


def register(server: CrystalServer) -> None:
    """Register every handler and command of this module on ``server``."""
    for method, options, handler in _FEATURES:
        server.feature(method, options)(handler)
    for name, handler in _COMMANDS:
        server.command(name)(handler)


# ---------------------------------------------------------------------- lifecycle
@_feature(types.INITIALIZE)
def initialize(ls: CrystalServer, params: types.InitializeParams) -> None:
    """Keep the settings of ``initializationOptions``."""
    options = params.initialization_options
    settings = None
    if isinstance(options, dict):
        # {"settings": {...}}, or {"crystalLsp": {...}} as Helix sends its `config`
        settings = options.get("settings", options.get(SECTION))
    # an empty Lua table arrives as [] (Neovim): no options, not a mistake
    if options is not None and options != [] and not isinstance(options, dict):
        ls.tell_once("initializationOptions must be an object; ignored")
    ls.configuration.init_settings = settings


@_feature(types.INITIALIZED)
async def initialized(ls: CrystalServer, params: types.InitializedParams) -> None:
    """Pull the settings, start indexing the folders, register for changes."""
    ls.loop = asyncio.get_running_loop()
    uris = list(ls.workspace.folders)
    if not uris and ls.workspace.root_uri:
        uris = [ls.workspace.root_uri]
    try:
        await ls.configuration.pull(uris)
        for uri in uris:
            ls.folders.add(uri)
    finally:
        ls.initialized.set()
    await _register_capabilities(ls)


@_feature(types.SHUTDOWN)
async def shutdown(ls: CrystalServer, params: Any) -> None:
    """Stop checks and builds; save the folders' pair scores for the next start."""
    ls.stopping = True
    ls.documents.cancel_all()
    ls.insertions.cancel_all()
    ls.indexer.supersede_all()
    for folder in list(ls.folders.by_uri.values()):
        try:
            await asyncio.wait_for(submit(folder, folder.save_scores), 10)
        except Exception as exc:  # best effort: the next start scores again
            log.info("could not save the pair scores of %s: %s", folder.name, exc)


# ---------------------------------------------------------------------- documents and files
@_feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: CrystalServer, params: types.DidOpenTextDocumentParams) -> None:
    """Check an opened document at once."""
    ls.insertions.opened(params.text_document.uri, params.text_document.text)
    ls.documents.schedule(params.text_document.uri, delay=0.0)


@_feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: CrystalServer, params: types.DidChangeTextDocumentParams) -> None:
    """Check an edited document after the debounce delay; follow the blocks that land."""
    ls.insertions.changed(params)
    ls.documents.schedule(params.text_document.uri)


@_feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: CrystalServer, params: types.DidSaveTextDocumentParams) -> None:
    """A saved document changed on disk."""
    ls.watcher.changed({params.text_document.uri: {types.FileChangeType.Changed}})


@_feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: CrystalServer, params: types.DidCloseTextDocumentParams) -> None:
    """Clear a closed document's diagnostics."""
    ls.insertions.closed(params.text_document.uri)
    ls.documents.close(params.text_document.uri)


@_feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: CrystalServer, params: types.DidChangeWatchedFilesParams) -> None:
    """Refresh the indexes of the folders with changed files."""
    changes: dict[str, set[types.FileChangeType]] = {}
    for change in params.changes:
        changes.setdefault(change.uri, set()).add(change.type)
    ls.watcher.changed(changes)


# ---------------------------------------------------------------------- workspace
@_feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(
    ls: CrystalServer, params: types.DidChangeConfigurationParams
) -> None:
    """Read the settings again; rebuild or re-check what they change."""
    if ls.caps("workspace", "configuration"):
        await ls.configuration.pull(list(ls.folders.by_uri))
    else:
        ls.configuration.apply(params.settings, list(ls.folders.by_uri))
    ls.folders.reconfigure()
    ls.insertions.reconfigure()


@_feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def did_change_workspace_folders(
    ls: CrystalServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    """Drop removed folders, index added ones, check open documents again."""
    for removed in params.event.removed:
        ls.folders.remove(removed.uri)
    added = [f.uri for f in params.event.added]
    if added:
        await ls.configuration.pull([*ls.folders.by_uri, *added])
    for uri in added:
        ls.folders.add(uri)
    ls.documents.recheck_open()


# ---------------------------------------------------------------------- hover and code actions
@_feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: CrystalServer, params: types.HoverParams) -> types.Hover | None:
    """Describe the innermost flagged copy under the cursor."""
    state = ls.documents.docs.get(params.text_document.uri)
    if state is None or state.result is None or state.index is None or not state.flags:
        return None
    offset = state.index.offset_at(params.position)
    hits = [f for f in state.flags if f.start <= offset <= f.end]
    if not hits:
        return None
    flag = min(hits, key=lambda f: (f.end - f.start, f.start))
    folder = ls.folders.folder_for(state.uri)
    text = await submit(folder, hover_markdown, folder, state.result, flag, state.index.text)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=flag.range,
    )


@_feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
)
async def code_action(ls: CrystalServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Quick fixes of the flagged copies in a range."""
    state = ls.documents.docs.get(params.text_document.uri)
    if state is None or state.result is None or state.index is None or not state.flags:
        return []
    folder = ls.folders.folder_for(state.uri)
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


@_command(SHOW_DOCUMENT)
async def show_document(ls: CrystalServer, *args: Any) -> Any:
    """Show a location of a copy in the editor (``[uri, range]``)."""
    if len(args) != 2 or not isinstance(args[0], str):
        raise JsonRpcInvalidParams("expected arguments [uri, range]")
    try:
        selection = parse_range(args[1])
    except ScoreError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    if not ls.caps("window", "show_document", "support"):
        # no window/showDocument (Neovim 0.7): say where it is, as a message the user can read
        fs_path = to_fs_path(args[0])
        where, _ = ls.folders.folder_for(args[0]).display_path(args[0], fs_path)
        place = f"{where}:{selection.start.line + 1}"
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Info, message=f"crystal: the other copy is at {place}"
            )
        )
        return {"uri": args[0], "range": args[1], "shown": False, "location": place}
    shown = await ls.window_show_document_async(
        types.ShowDocumentParams(uri=args[0], take_focus=True, selection=selection)
    )
    return {"uri": args[0], "range": args[1], "shown": bool(shown and shown.success)}


@_command(COMPARE)
async def compare(ls: CrystalServer, *args: Any) -> dict[str, Any]:
    """Both copies' texts for the client's diff view; shows the left one unless ``goTo`` false."""
    spec = resolve_id(_single(args, COMPARE))
    out = compare_texts(ls, spec)
    if spec.get("goTo", True) is not False:
        start = out["left"]["range"]["start"]
        out["shown"] = await show_document(ls, out["left"]["uri"], {"start": start, "end": start})
    return out


# ---------------------------------------------------------------------- inserted blocks
@_feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
def code_lens(ls: CrystalServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    """The verdicts of the blocks that landed in a document."""
    return ls.insertions.lenses(params.text_document.uri)


@_feature(INSERTIONS)
def insertions(ls: CrystalServer, params: Any) -> dict[str, Any]:
    """The ``crystal/insertions`` request: what landed this session (or its JSONL export)."""
    return ls.insertions.tally(_tally_params(params, INSERTIONS))


@_command(SHOW_INSERTIONS)
def show_insertions(ls: CrystalServer, *args: Any) -> dict[str, Any]:
    """``crystal/insertions`` as a command (an optional ``{format, uri}`` argument)."""
    arg = _single(args, SHOW_INSERTIONS) if args else {}
    return ls.insertions.tally(_tally_params(arg, SHOW_INSERTIONS))


# ---------------------------------------------------------------------- scoring
@_feature(SCORE)
async def score(ls: CrystalServer, params: Any) -> dict[str, Any]:
    """The ``crystal/score`` request."""
    return await score_request.score(ls, _mapping(params, SCORE))


@_command(SCORE_SELECTION)
async def score_selection(ls: CrystalServer, *args: Any) -> dict[str, Any]:
    """``crystal/score`` of a selection in a document."""
    arg = _single(args, SCORE_SELECTION)
    if not isinstance(arg.get("uri"), str) or "range" not in arg:
        raise JsonRpcInvalidParams(f"{SCORE_SELECTION}: expected {{uri, range, references}}")
    hypothesis = {"uri": arg["uri"], "range": arg["range"]}
    return await score_request.score(ls, _score_params(hypothesis, arg))


@_command(SCORE_TEXT)
async def score_text(ls: CrystalServer, *args: Any) -> dict[str, Any]:
    """``crystal/score`` of a text."""
    arg = _single(args, SCORE_TEXT)
    if not isinstance(arg.get("text"), str):
        raise JsonRpcInvalidParams(f"{SCORE_TEXT}: expected {{text, language, references}}")
    return await score_request.score(ls, _score_params({"text": arg["text"]}, arg))


@_command(SHOW_TRIVIAL)
async def show_trivial(ls: CrystalServer, *args: Any) -> dict[str, Any]:
    """The most frequent n-grams of a language's trivially shared set S."""
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
    folder = score_request.folder_with_language(ls, language)
    await ls.indexer.ready(folder)
    sset = await submit(folder, sset_for, folder, language)
    return {
        "language": language,
        "k": sset.k,
        "fingerprint": sset.fingerprint(),
        "ngrams": [{"ngram": list(g), "count": int(c)} for g, c in sset.top(top)],
    }


@_command(REBUILD)
async def rebuild(ls: CrystalServer, *args: Any) -> dict[str, Any]:
    """Rebuild every folder's index; answer when all are done."""
    started = time.perf_counter()
    folders = list(ls.folders.by_uri.values())
    tasks = [ls.indexer.start_build(folder) for folder in folders]
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
    files = sum(sum(1 for s in folder.index.files.values() if not s.override) for folder in folders)
    return {"files": files, "seconds": round(time.perf_counter() - started, 3)}


async def _register_capabilities(ls: CrystalServer) -> None:
    registrations = []
    if ls.caps("workspace", "did_change_configuration", "dynamic_registration"):
        registrations.append(
            types.Registration(
                id=str(uuid.uuid4()),
                method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION),
            )
        )
    if ls.caps("workspace", "did_change_watched_files", "dynamic_registration"):
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


def _score_params(hypothesis: dict[str, Any], arg: Mapping[str, Any]) -> dict[str, Any]:
    """The ``crystal/score`` parameters of a scoring command's argument."""
    return {
        "hypothesis": hypothesis,
        "references": arg.get("references", "auto"),
        "language": arg.get("language"),
        "metrics": arg.get("metrics"),
    }


def _tally_params(params: Any, what: str) -> dict[str, Any]:
    if params is None:
        return {}
    params = _mapping(params, what)
    if params.get("format", "json") not in ("json", "jsonl"):
        raise JsonRpcInvalidParams(f'{what}: format must be "json" or "jsonl"')
    if params.get("uri") is not None and not isinstance(params["uri"], str):
        raise JsonRpcInvalidParams(f"{what}: uri must be a string")
    return dict(params)


def _mapping(params: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(params, Mapping):
        raise JsonRpcInvalidParams(f"{what}: parameters must be an object")
    return params


def _single(args: tuple[Any, ...], what: str) -> Mapping[str, Any]:
    if len(args) != 1 or not isinstance(args[0], Mapping):
        raise JsonRpcInvalidParams(f"{what}: expected one object argument")
    return args[0]

"""The ``crystal/score`` request (and the commands built on it): from parameters to scores.

The hypothesis and explicit references are read on the loop thread (open buffers win over the
disk); finding automatic references and scoring run on the folder's worker thread.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from pygls.exceptions import JsonRpcInvalidParams

from crystal_lsp.errors import CrystalError
from crystal_lsp.server.core.interface import Core
from crystal_lsp.server.positions import Codec, TextIndex
from crystal_lsp.server.references import AutoReferences, check_same_language, region_searches
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
from crystal_lsp.server.uris import to_fs_path
from crystal_lsp.server.workspace import Folder, submit
from crystal_lsp.text.sources import SkippedFile, contained, read_source

if TYPE_CHECKING:
    from lsprotocol import types

log = logging.getLogger(__name__)


class ScoringCore(Core, Protocol):
    """The core, and the automatic references' caches that scoring keeps between requests."""

    @property
    def auto(self) -> AutoReferences:
        """Reference search state (one per server)."""
        ...


Extra = Callable[[Folder, str, Piece, list[Piece]], dict[str, Any]]
"""More of a result, from the scored pieces (worker thread): ``(folder, language, hypothesis,
references)`` -> keys merged into the result (how inserted blocks get their verdict)."""


async def score(
    ls: ScoringCore, params: Mapping[str, Any], extra: Extra | None = None
) -> dict[str, Any]:
    """Answer a ``crystal/score`` request (bad parameters become JSON-RPC errors)."""
    try:
        return await _score_or_fail(ls, params, extra)
    except (ScoreError, CrystalError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


def folder_with_language(ls: Core, language: str) -> Folder:
    """The folder with the most indexed files of a language (else the first, else detached)."""
    best: Folder | None = None
    count = -1
    for folder in ls.folders.by_uri.values():
        n = sum(1 for s in folder.index.files.values() if s.entry.language == language)
        if n > count:
            best, count = folder, n
    if best is not None:
        return best
    return ls.folders.folder_for("untitled:crystal")


def _main_language(folder: Folder) -> str | None:
    counts: dict[str, int] = {}
    for state in folder.index.files.values():
        if not state.override:
            counts[state.entry.language] = counts.get(state.entry.language, 0) + 1
    return max(sorted(counts), key=lambda k: counts[k]) if counts else None


def _spec_text(ls: Core, spec: Mapping[str, Any], what: str) -> tuple[str, str | None, str]:
    """``(text, uri, language id)`` of a hypothesis or reference spec (loop thread)."""
    if "text" in spec:
        if not isinstance(spec["text"], str):
            raise ScoreError(f"{what}: text must be a string")
        return spec["text"], None, ""
    uri = spec.get("uri")
    if not isinstance(uri, str):
        raise ScoreError(f"{what}: needs text or uri")
    doc = ls.documents.open_document(uri)
    if doc is not None:
        return doc.source, uri, doc.language_id or ""
    path = to_fs_path(uri)
    if path is None:
        raise ScoreError(f"{what}: {uri} is neither open nor a file")
    try:
        return read_source(path, within=_readable_root(ls, path, what)).text, uri, ""
    except SkippedFile as exc:
        raise ScoreError(f"{what}: {exc}") from None


def read_spec(ls: Core, spec: Mapping[str, Any], what: str) -> tuple[str, str | None]:
    """``(text, uri)`` of a ``{text}`` or ``{uri}`` spec, as ``crystal/score`` reads it.

    Open buffers win over the disk; files are read only inside the workspace folders (unless
    ``referencesOutsideWorkspace``). Raises :class:`ScoreError`.
    """
    text, uri, _ = _spec_text(ls, spec, what)
    return text, uri


def _readable_root(ls: Core, path: str, what: str) -> str | None:
    """The workspace folder a file may be read from (symlinks confined to it).

    Outside every folder only with ``referencesOutsideWorkspace``: over ``--tcp`` anyone who can
    connect could otherwise read any file this process can.
    """
    real = os.path.realpath(path)
    for folder in ls.folders.by_uri.values():
        if folder.root is not None and contained(real, folder.root):
            return folder.root
    if ls.configuration.settings.references_outside_workspace:
        return None
    raise ScoreError(
        f"{what}: {path} is outside the workspace folders (open it in the editor, or set "
        "crystalLsp.referencesOutsideWorkspace)"
    )


def _spec_range(spec: Mapping[str, Any]) -> types.Range | None:
    return parse_range(spec["range"]) if spec.get("range") is not None else None


def _language(params: Mapping[str, Any], uri: str | None, text: str, language_id: str) -> str:
    """The requested language, else the one of the file name, the text or the editor."""
    filename = os.path.basename(to_fs_path(uri) or "") if uri else None
    language = resolve_language(params.get("language") or None, filename, text)
    if not params.get("language") and language == "generic" and language_id:
        language = resolve_language(language_id, None, text)
    return language


def _reference(
    ls: Core,
    k: int,
    ref: Mapping[str, Any],
    language: str,
    codec: Codec,
    hyp_uri: str | None = None,
) -> Piece:
    ref_text, ref_uri, _ = _spec_text(ls, ref, f"references[{k}]")
    ref_range = _spec_range(ref)
    check_same_language(ref_uri, language, f"references[{k}]", hyp_uri)
    label = ref.get("label") if isinstance(ref.get("label"), str) else None
    return make_piece(
        label or (ref_uri or f"reference {k + 1}"), ref_uri, ref_text, ref_range, language, codec
    )


def _own_lines(
    folder: Folder, uri: str, text: str, rng: types.Range | None, codec: Codec
) -> tuple[str, int, int]:
    """The hypothesis's own lines, which automatic references must not come from."""
    path, _ = folder.display_path(uri, to_fs_path(uri))
    if rng is None:
        return (path, 1, 10**9)
    index = TextIndex(text, codec)
    return (
        path,
        index.core_line(index.offset_at(rng.start)),
        index.core_line(index.offset_at(rng.end)),
    )


async def _score_or_fail(
    ls: ScoringCore, params: Mapping[str, Any], extra: Extra | None
) -> dict[str, Any]:
    spec = params.get("hypothesis")
    if not isinstance(spec, Mapping):
        raise ScoreError("hypothesis must be an object with text or uri (and range)")
    refs = reference_specs(params.get("references"))
    metrics = parse_metrics(params.get("metrics"))
    text, uri, language_id = _spec_text(ls, spec, "hypothesis")
    rng = _spec_range(spec)
    language = _language(params, uri, text, language_id)
    codec = ls.workspace.position_codec
    folder = ls.folders.folder_for(uri) if uri else folder_with_language(ls, language)
    await ls.indexer.ready(folder)
    if not params.get("language") and language == "generic":
        # too little text to tell: the language most of the folder is written in
        language = _main_language(folder) or language
    hypothesis = make_piece("hypothesis", uri, text, rng, language, codec)
    searches = region_searches(folder, refs, language, uri)
    pieces = [
        _reference(ls, k, ref, language, codec, uri)
        for k, ref in enumerate(refs or [])
        if k not in searches
    ]
    skip = _own_lines(folder, uri, text, rng, codec) if uri is not None else None

    def work() -> dict[str, Any]:
        started = time.perf_counter()
        sset = sset_for(folder, language)
        references, notes = list(pieces), []
        crystal = ls.auto.metric(folder, language, sset)
        for within in searches.values() if refs is not None else [None]:
            found, note = ls.auto.find(folder, language, hypothesis, crystal, skip, codec, within)
            references += found
            notes.append({**note, "within": within.name if within is not None else "workspace"})
        result = score_pieces(hypothesis, references, sset, folder, language, metrics)
        if notes:
            result["referenceSearch"] = notes
        if extra is not None:
            result.update(extra(folder, language, hypothesis, references))
        log.debug("scored in %.1f ms", (time.perf_counter() - started) * 1000)
        return result

    return await submit(folder, work)

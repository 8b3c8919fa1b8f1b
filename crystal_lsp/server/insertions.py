"""Suggestions scored as they land: inserted blocks, their verdicts as code lenses, the tally.

Every ``didChange`` is replayed on the blocks the server tracks (:mod:`.landing`); a change that
inserts at least ``insertionMinLines`` non-blank lines -- an accepted completion, a paste, an
agent's edit, a file reloaded after it changed on disk -- *lands* a block. After the debounce
delay without an edit reaching it (edits elsewhere in the file do not delay it), the block is
scored exactly as ``crystal/score`` with automatic references scores a selection
(:func:`crystal_lsp.server.score_request.score`, on the folder's worker thread, never on the
typing path) and judged a copy of its closest region or new code (:mod:`.verdict`). The verdict
becomes a code lens above the block, whose command opens the comparison (``crystal.compare``),
and an entry of the session's tally (``crystal/insertions``, :mod:`.tally`); clients that
support it are asked to refresh their lenses. The lens goes when the block is edited, after
``insertionLensSeconds``, or when the document closes. With ``insertionDiagnostics`` a copy also
gets a diagnostic.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from crystal_lsp.server import score_request
from crystal_lsp.server.compare import COMPARE
from crystal_lsp.server.landing import Span, follow, lines_of
from crystal_lsp.server.scoring import Piece
from crystal_lsp.server.tally import (
    CLOSED,
    CODE,
    EDITED,
    EXPIRED,
    PENDING,
    SHOWN,
    Record,
    summary,
)
from crystal_lsp.server.uris import to_fs_path
from crystal_lsp.server.verdict import COPY, judge
from crystal_lsp.server.workspace import Folder

if TYPE_CHECKING:
    from crystal_lsp.server.score_request import ScoringCore

log = logging.getLogger(__name__)

MAX_RECORDS = 10_000
"""Tally entries kept (the oldest go first, counted as dropped)."""
MAX_LINES = 2_000
"""A larger block is recorded, not scored (scoring it would hold up the document's checks)."""
GONE = "gone"


@dataclass
class Landing:
    """A block that landed in an open document."""

    record: Record
    span: Span
    """Its LSP lines now."""
    started: float
    """``time.perf_counter()`` of the inserting change."""
    state: str = PENDING
    touches: int = 0
    """Edits that reached it (while pending, each restarts the wait)."""
    task: asyncio.Task[None] | None = None


@dataclass
class Tracked:
    """An open document's last text and its blocks."""

    text: str
    landings: list[Landing] = field(default_factory=list)


class Insertions:
    """The inserted blocks of open documents and the session's tally."""

    def __init__(self, server: ScoringCore) -> None:
        self.server = server
        self.docs: dict[str, Tracked] = {}
        self.records: list[Record] = []
        self.dropped = 0
        self._ids = itertools.count(1)
        self._background: set[asyncio.Future[Any]] = set()

    # ------------------------------------------------------------------ document events
    def opened(self, uri: str, text: str) -> None:
        """Start following a document."""
        self.closed(uri)
        self.docs[uri] = Tracked(text)

    def closed(self, uri: str) -> None:
        """Forget a closed document's blocks (their tally entries stay)."""
        tracked = self.docs.pop(uri, None)
        for landing in tracked.landings if tracked is not None else []:
            self._drop(landing, CLOSED)

    def changed(self, params: types.DidChangeTextDocumentParams) -> None:
        """Replay a change on the document's blocks; blocks that landed start their wait.

        Never raises: the document's check runs after it whatever happens here.
        """
        try:
            self._changed(params)
        except Exception:
            uri = params.text_document.uri
            log.exception("following the blocks of %s failed; they are dropped", uri)
            self.closed(uri)
            doc = self.server.documents.open_document(uri)
            if doc is not None:
                self.docs[uri] = Tracked(doc.source)

    def _changed(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        doc = self.server.documents.open_document(uri)
        if doc is None:
            return
        tracked = self.docs.get(uri)
        new = doc.source
        if tracked is None:
            self.docs[uri] = Tracked(new)
            return
        old, tracked.text = tracked.text, new
        settings = self.server.configuration.settings
        live = [x for x in tracked.landings if x.state != GONE]
        followed = follow(
            old,
            new,
            params.content_changes,
            [x.span for x in live],
            settings.insertion_min_lines if settings.insertions else None,
            self.server.workspace.position_codec,
        )
        if followed.lost:
            log.info("could not replay the changes of %s version %s", uri, doc.version)
        refresh = False
        for landing, moved in zip(live, followed.moved):
            if moved.span is not None:
                landing.span = moved.span
            if moved.span is None or (moved.touched and landing.state == SHOWN):
                refresh |= landing.state == SHOWN
                self._drop(landing, EDITED)
            elif moved.touched:
                landing.touches += 1
        tracked.landings = [x for x in tracked.landings if x.state != GONE]
        for span in followed.landed:
            if not any(_overlap(span, x.span) for x in tracked.landings if x.state == PENDING):
                self._land(tracked, uri, span)
        if refresh:
            self._refresh(uri)

    def reconfigure(self) -> None:
        """Settings changed: with insertions off, every block goes; diagnostics follow."""
        off = not self.server.configuration.settings.insertions
        for uri, tracked in self.docs.items():
            shown = any(x.state == SHOWN for x in tracked.landings)
            if off:
                for landing in tracked.landings:
                    self._drop(landing, EXPIRED)
                tracked.landings = []
            if shown:
                self._refresh(uri)

    def cancel_all(self) -> None:
        """Stop every wait (shutdown)."""
        for tracked in self.docs.values():
            for landing in tracked.landings:
                if landing.task is not None:
                    landing.task.cancel()

    # ------------------------------------------------------------------ what clients ask
    def lenses(self, uri: str) -> list[types.CodeLens]:
        """The code lenses of a document's scored blocks."""
        tracked = self.docs.get(uri)
        out: list[types.CodeLens] = []
        for landing in tracked.landings if tracked is not None else []:
            if landing.state != SHOWN:
                continue
            first = types.Position(line=landing.span[0], character=0)
            spec = landing.record.comparison(self._range_json(uri, landing.span))
            command = types.Command(
                title=landing.record.title(),
                command=COMPARE if spec is not None else "",
                arguments=[spec] if spec is not None else None,
            )
            out.append(types.CodeLens(range=types.Range(start=first, end=first), command=command))
        return out

    def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """Diagnostics of a document's blocks that are copies (``insertionDiagnostics``)."""
        settings = self.server.configuration.settings
        tracked = self.docs.get(uri)
        if not (settings.insertion_diagnostics and settings.enable) or tracked is None:
            return []
        from crystal_lsp.server.diagnostics import SEVERITY, SOURCE

        out = []
        for landing in tracked.landings:
            record = landing.record
            if landing.state != SHOWN or record.verdict != COPY or record.closest is None:
                continue
            rng = self._range_json(uri, landing.span)
            closest = record.closest
            related = None
            if "uri" in closest and "range" in closest:
                location = types.Location(uri=closest["uri"], range=_range(closest["range"]))
                related = [types.DiagnosticRelatedInformation(location, "the closest region")]
            out.append(
                types.Diagnostic(
                    range=_range(rng),
                    message=record.message(),
                    severity=SEVERITY.get(settings.severity, types.DiagnosticSeverity.Information),
                    code=CODE,
                    source=SOURCE,
                    related_information=related,
                    data={"insertion": record.id, "similarity": record.similarity},
                )
            )
        return out

    def tally(self, params: Any) -> dict[str, Any]:
        """The ``crystal/insertions`` result (``{"format": "jsonl"}``: the JSONL export)."""
        params = params if isinstance(params, dict) else {}
        uri = params.get("uri")
        records = [r for r in self.records if uri is None or r.uri == uri]
        counts = summary(records, self.dropped)
        if params.get("format") == "jsonl":
            # an item of `crystal-lsp score --jsonl` needs a reference: the others are counted
            scored = [r for r in records if r.code and r.texts]
            jsonl = "".join(r.jsonl() + "\n" for r in scored)
            alone = sum(1 for r in records if r.code and not r.texts)
            return {
                "jsonl": jsonl,
                "count": len(scored),
                "withoutReferences": alone,
                "summary": counts,
            }
        return {"insertions": [r.to_json() for r in records], "summary": counts}

    # ------------------------------------------------------------------ the life of a block
    def _land(self, tracked: Tracked, uri: str, span: Span) -> None:
        doc = self.server.documents.open_document(uri)
        folder = self.server.folders.folder_for(uri)
        path, _ = folder.display_path(uri, to_fs_path(uri))
        lines = lines_of(tracked.text)[span[0] : span[1] + 1]
        record = Record(
            next(self._ids),
            dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds"),
            uri,
            path,
            span[0],
            span[1],
            sum(1 for line in lines if line.strip()),
        )
        self.records.append(record)
        if len(self.records) > MAX_RECORDS:
            del self.records[0]
            self.dropped += 1
        landing = Landing(record, span, time.perf_counter())
        tracked.landings.append(landing)
        landing.task = asyncio.ensure_future(self._settle(landing))
        log.debug("a block landed in %s v%s: lines %d-%d", uri, doc and doc.version, *span)

    async def _settle(self, landing: Landing) -> None:
        """Wait for the block to rest, score it, show the verdict (and later take it away)."""
        try:
            while landing.state == PENDING:
                touches = landing.touches
                await asyncio.sleep(self.server.configuration.settings.debounce)
                if landing.state == PENDING and landing.touches == touches:
                    await self._score(landing, touches)
            seconds = self.server.configuration.settings.insertion_lens_seconds
            if landing.state == SHOWN and seconds:
                await asyncio.sleep(seconds)
                if landing.state == SHOWN:
                    self._drop(landing, EXPIRED)
                    self._refresh(landing.record.uri)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("scoring an inserted block failed")
            self.server.log_to_client(
                f"crystal: scoring an inserted block failed: {exc}", types.MessageType.Error
            )
            self._drop(landing, EXPIRED)

    async def _score(self, landing: Landing, touches: int) -> None:
        """Score a resting block; on an edit reaching it meanwhile, leave it pending."""
        record = landing.record
        uri = record.uri
        result = self.server.documents.result_of(uri)
        if result is not None and result.skip is not None:
            record.note = result.skip
            self._drop(landing, EXPIRED)
            return
        first, last = landing.span
        if last - first + 1 > MAX_LINES:
            record.note = f"{last - first + 1} lines, more than {MAX_LINES}"
            self._show(landing)
            return
        threshold = self.server.configuration.settings.insertion_threshold

        def extra(folder: Folder, language: str, hyp: Piece, refs: list[Piece]) -> dict[str, Any]:
            found = judge(folder, language, hyp, refs, threshold)
            found.update(code=hyp.code, texts=[r.code for r in refs], tokens=len(hyp.tokens))
            return {"insertion": found}

        params = {
            "hypothesis": {"uri": uri, "range": self._range_json(uri, landing.span)},
            "references": "auto",
            "language": result.language if result is not None and result.language else None,
        }
        scored = await score_request.score(self.server, params, extra)
        if landing.state != PENDING or landing.touches != touches:
            return
        record.scored(scored)
        self._show(landing)

    def _show(self, landing: Landing) -> None:
        record = landing.record
        record.latency_ms = round((time.perf_counter() - landing.started) * 1000, 1)
        landing.state = record.state = SHOWN
        log.info("inserted block %s: %s (%.0f ms)", record.id, record.title(), record.latency_ms)
        self._refresh(record.uri)

    def _drop(self, landing: Landing, why: str) -> None:
        record = landing.record
        if landing.state == PENDING and not record.note:
            record.note = f"{why} before it was scored"
        if landing.state != GONE:
            record.state = why
        landing.state = GONE
        task = landing.task
        if task is not None and task is not _current_task():
            task.cancel()

    def _refresh(self, uri: str) -> None:
        """Ask the client for lenses again, and republish diagnostics when they change."""
        if self.server.stopping:
            return
        if self.server.caps("workspace", "code_lens", "refresh_support"):
            self._spawn(self._ask_refresh())
        self.server.documents.republish(uri)  # only sent when the diagnostics changed

    async def _ask_refresh(self) -> None:
        try:
            await self.server.workspace_code_lens_refresh_async(None)
        except Exception as exc:
            log.debug("workspace/codeLens/refresh failed: %s", exc)

    def _spawn(self, awaitable: Any) -> None:
        self._background = {t for t in self._background if not t.done()}
        self._background.add(asyncio.ensure_future(awaitable))

    def _range_json(self, uri: str, span: Span) -> dict[str, Any]:
        """The range of whole lines ``span`` in the document now (to the end of the last)."""
        doc = self.server.documents.open_document(uri)
        lines = doc.lines if doc is not None else ()
        last = min(span[1], max(len(lines) - 1, 0))
        text = lines[last].rstrip("\r\n") if lines else ""
        units = self.server.workspace.position_codec.client_num_units(text)
        return {
            "start": {"line": span[0], "character": 0},
            "end": {"line": last, "character": units},
        }


def _overlap(a: Span, b: Span) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _range(value: dict[str, Any]) -> types.Range:
    start, end = value["start"], value["end"]
    return types.Range(
        start=types.Position(line=start["line"], character=start["character"]),
        end=types.Position(line=end["line"], character=end["character"]),
    )


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None

"""The MCP tools of ``crystal-lsp mcp``, on the official SDK's ``MCPServer``.

Each tool declares its input schema (from the typed, bounded parameters) and its output schema
(the models of :mod:`crystal_lsp.mcp.models`), and answers with structured content plus a short
text for the agent. Arguments that fail the schema, paths outside the root, unknown languages and
a failing git are tool errors (``isError``), never a crash of the session. While the index is
being built, a call waits for it and reports the build's progress on its own progress token.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from crystal_lsp.clones.findings import display_path
from crystal_lsp.errors import CrystalError
from crystal_lsp.mcp import present
from crystal_lsp.mcp.models import (
    CheckResult,
    FileClonesResult,
    ScanToolResult,
    ScoreResult,
    TriviallySharedResult,
    TrivialNgram,
)
from crystal_lsp.mcp.scoring import score_code
from crystal_lsp.mcp.workspace import Workspace
from crystal_lsp.text.sources import MAX_REFERENCES, MAX_SNIPPET_CHARS
from crystal_lsp.version import __version__

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_CODE_CHARS = MAX_SNIPPET_CHARS
PROGRESS_SECONDS = 0.5
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "crystal-lsp finds code that repeats code of this repository (CrystalBLEU on the normalized "
    "view: renamed and edited copies too). Before adding a function, call check_duplication "
    "with it; when it names an original, reuse that instead of adding the copy."
)

Code = Annotated[str, Field(min_length=1, max_length=MAX_CODE_CHARS, description="source code")]
Language = Annotated[
    str | None, Field(default=None, max_length=64, description="Pygments language name or alias")
]


def _answer(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json"),
    )


async def _ready(ws: Workspace, ctx: Context[Any, Any]) -> None:
    """Wait for the index, reporting the build's progress to this call's progress token."""
    built = asyncio.wrap_future(ws.start())
    waited = False
    while not built.done():
        waited = True
        status = ws.status
        await ctx.report_progress(status.done, status.total, f"indexing: {status.phase}")
        await asyncio.wait({built}, timeout=PROGRESS_SECONDS)
    try:
        built.result()
    except Exception as exc:
        raise ToolError(f"indexing {ws.root} failed: {exc}") from None
    if waited:
        await ctx.report_progress(1, 1, f"indexing: ready ({ws.status.files} files)")


async def _on_worker(ws: Workspace, ctx: Context[Any, Any], fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn`` on the workspace's worker once the index is ready; bad input is a tool error."""
    await _ready(ws, ctx)
    future: concurrent.futures.Future[T] = ws.submit(fn, *args)
    try:
        return await asyncio.wrap_future(future)
    except CrystalError as exc:
        raise ToolError(str(exc)) from None


def create_server(ws: Workspace) -> MCPServer[Any]:
    """An MCP server with the five tools over one workspace."""
    server: MCPServer[Any] = MCPServer(
        "crystal-lsp", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for register in (_check_tool, _score_tool, _file_clones_tool, _scan_tool, _trivial_tool):
        register(server, ws)
    return server


def _check_tool(server: MCPServer[Any], ws: Workspace) -> None:
    @server.tool(name="check_duplication", annotations=READ_ONLY)
    async def check_duplication(
        code: Code,
        ctx: Context[Any, Any],
        language: Language = None,
        path: Annotated[
            str | None,
            Field(default=None, max_length=4096, description="where the code is or will go"),
        ] = None,
        max_results: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> Annotated[CallToolResult, CheckResult]:
        """Find the code of this repository that a snippet repeats (renamed and edited copies too).

        Returns aligned line ranges, similarity (CrystalBLEU of the normalized views), raw
        CrystalBLEU, the shared non-trivial n-grams and one sentence saying what to reuse.
        """
        rel = ws.confine(path) if path else None
        lang = ws.explicit_language(language, rel, code)
        outcome = await _on_worker(ws, ctx, ws.check, code, lang, rel)
        found = present.duplicates(outcome, rel)
        result = CheckResult(
            language=outcome.language,
            language_guessed=bool(outcome.guessed),
            tokens=outcome.tokens,
            duplicates=found[:max_results],
            omitted=max(0, len(found) - max_results),
            advice=present.advice(found, outcome, ws.status.files),
            threshold=ws.config.threshold,
            signature=ws.config.signature(),
            indexed_files=ws.status.files,
        )
        return _answer(result, present.check_text(result))


def _score_tool(server: MCPServer[Any], ws: Workspace) -> None:
    @server.tool(name="score", annotations=READ_ONLY)
    async def score(
        code: Code,
        ctx: Context[Any, Any],
        references: Annotated[
            list[Annotated[str, Field(max_length=MAX_CODE_CHARS)]] | Literal["auto"],
            Field(description='reference solutions, or "auto": the closest code of the repository'),
        ] = "auto",
        language: Language = None,
        metrics: Annotated[
            list[Literal["bleu", "crystalbleu", "ruby"]] | None,
            Field(description="ruby adds RUBY (needs crystal-lsp[ruby])"),
        ] = None,
    ) -> Annotated[CallToolResult, ScoreResult]:
        """Score code against references with BLEU and CrystalBLEU (and RUBY when asked).

        Gives the per-order n-gram statistics and the signatures that make scores comparable.
        """
        if isinstance(references, list) and not 1 <= len(references) <= MAX_REFERENCES:
            raise ToolError(f'references: give 1 to {MAX_REFERENCES} texts, or "auto"')
        lang = ws.explicit_language(language, None, code)
        refs = None if references == "auto" else list(references)
        result = await _on_worker(ws, ctx, score_code, ws, code, refs, lang, metrics or [])
        text = (
            f"BLEU {result.bleu:.4f}, CrystalBLEU {result.crystalbleu:.4f}"
            + (f", RUBY {result.ruby:.4f}" if result.ruby is not None else "")
            + f" against {len(result.references)} reference(s) ({result.language})"
        )
        best = max(result.references, key=lambda r: r.crystalbleu, default=None)
        if best is not None:
            text += f"; closest: {best.label} (CrystalBLEU {best.crystalbleu:.4f})"
        return _answer(result, "\n".join([text, *result.notes]))


def _file_clones_tool(server: MCPServer[Any], ws: Workspace) -> None:
    @server.tool(name="file_clones", annotations=READ_ONLY)
    async def file_clones(
        path: Annotated[str, Field(min_length=1, max_length=4096)],
        ctx: Context[Any, Any],
        top: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> Annotated[CallToolResult, FileClonesResult]:
        """The clone classes that have a copy in one file of the repository."""
        rel = ws.confine(path)
        touching = await _on_worker(ws, ctx, ws.file_findings, rel)
        shown = touching[:top]
        result = FileClonesResult(
            path=display_path(rel),
            classes=[present.clone_class(f) for f in shown],
            omitted=len(touching) - len(shown),
            signature=ws.config.signature(),
        )
        copies = sum(len(f.pairs) for f in touching)
        summary = (
            f"crystal: {len(touching)} clone classes ({copies} copies) touch {display_path(rel)}"
        )
        text = present.findings_text(touching, top, 0, ws.config.threshold, summary)
        return _answer(result, text)


def _scan_tool(server: MCPServer[Any], ws: Workspace) -> None:
    @server.tool(name="scan", annotations=READ_ONLY)
    async def scan(
        ctx: Context[Any, Any],
        new_since: Annotated[
            str | None,
            Field(
                default=None,
                max_length=256,
                description="only copies touching code changed since this git revision",
            ),
        ] = None,
        top: Annotated[int, Field(ge=1, le=100)] = 10,
    ) -> Annotated[CallToolResult, ScanToolResult]:
        """Scan the repository for copies: the summary and the top findings, compact."""
        scanned = await _on_worker(ws, ctx, ws.scan, new_since)
        result = present.scan_result(scanned, top, new_since)
        text = present.findings_text(scanned.findings, top, scanned.files, ws.config.threshold)
        return _answer(result, text)


def _trivial_tool(server: MCPServer[Any], ws: Workspace) -> None:
    @server.tool(name="trivially_shared", annotations=READ_ONLY)
    async def trivially_shared(
        language: Annotated[str, Field(min_length=1, max_length=64)],
        ctx: Context[Any, Any],
        top: Annotated[int, Field(ge=0, le=1000)] = 50,
    ) -> Annotated[CallToolResult, TriviallySharedResult]:
        """The trivially shared n-grams (the set S) that CrystalBLEU ignores for a language."""
        lang = ws.canonical_language(language)
        sset, source = await _on_worker(ws, ctx, ws.sset, lang)
        ranked = sset.top(top)
        result = TriviallySharedResult(
            language=lang,
            source=source,
            k=sset.k,
            size=len(sset),
            fingerprint=sset.fingerprint(),
            ngrams=[TrivialNgram(ngram=list(g), count=int(c)) for g, c in ranked],
            omitted=len(sset) - len(ranked),
        )
        text = f"S of {lang} ({source}): {len(sset)} n-grams, k {sset.k}; top {len(ranked)}: " + (
            " | ".join(display_path(" ".join(g)) for g, _ in ranked[:10]) or "(empty)"
        )
        return _answer(result, text)

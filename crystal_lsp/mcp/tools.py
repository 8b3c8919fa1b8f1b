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
import inspect
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
    "crystal-lsp finds code that repeats code of this repository, also when it was renamed or "
    "edited. Before adding a function, class or block, call check_duplication with it; when it "
    "names an original, reuse or extend that code instead of adding a copy. Before changing a "
    "file, file_clones lists the other copies of its code that may need the same change."
)

Code = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_CODE_CHARS,
        description="the source code: a function, class or block (up to 200,000 characters)",
    ),
]
Language = Annotated[
    str | None,
    Field(
        default=None,
        max_length=64,
        description="its language, e.g. python, java, typescript (default: from the file "
        "name's extension when a path is given, else recognized from the code)",
    ),
]
Top = "at most this many groups of copies, largest first"


def _answer(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json"),
    )


async def _ready(ws: Workspace, ctx: Context[Any, Any]) -> None:
    """Wait for the index, reporting the build's progress to this call's progress token.

    A call waits at most ``ws.wait`` seconds: then it answers (as a tool error, which agents
    read) where the indexing is and when to call again, instead of holding the agent a minute.
    """
    source = ws.start()  # asked directly: its asyncio wrapper learns of the end a turn later
    built = asyncio.wrap_future(source)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + ws.wait
    waited = False
    while not source.done():
        waited = True
        status = ws.status
        await ctx.report_progress(status.done, status.total, f"indexing: {status.phase}")
        left = deadline - loop.time()
        if left <= 0:
            raise ToolError(status.note())
        await asyncio.wait({built}, timeout=min(PROGRESS_SECONDS, left))
    try:
        source.result()
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


def _tool(server: MCPServer[Any], name: str) -> Callable[[Callable[..., Any]], Any]:
    """Register a read-only tool; its description is its docstring, dedented."""

    def register(fn: Callable[..., Any]) -> Any:
        description = inspect.cleandoc(fn.__doc__ or "")
        return server.tool(name=name, annotations=READ_ONLY, description=description)(fn)

    return register


def create_server(ws: Workspace) -> MCPServer[Any]:
    """An MCP server with the five tools over one workspace."""
    server: MCPServer[Any] = MCPServer(
        "crystal-lsp", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for register in (_check_tool, _score_tool, _file_clones_tool, _scan_tool, _trivial_tool):
        register(server, ws)
    return server


def _check_tool(server: MCPServer[Any], ws: Workspace) -> None:
    @_tool(server, "check_duplication")
    async def check_duplication(
        code: Code,
        ctx: Context[Any, Any],
        language: Language = None,
        path: Annotated[
            str | None,
            Field(
                default=None,
                max_length=4096,
                description="the file the code is in or will go to, relative to the repository "
                "root (e.g. src/app/config.py): the code itself, already written there, is not "
                "reported as its own copy",
            ),
        ] = None,
        max_results: Annotated[
            int, Field(ge=1, le=50, description="at most this many originals, closest first")
        ] = 10,
    ) -> Annotated[CallToolResult, CheckResult]:
        """Use it before adding a function, class or block, and before committing generated code.

        Tells whether the code repeats code this repository already has (also renamed or
        edited) and names the original to reuse or extend.

        Returns each original's file and lines, the lines of your code that match it, how
        similar they are (0 to 1; 1 for the same code with other names), the distinctive code
        both contain, and one sentence of advice.
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
            advice=present.advice(found, outcome, ws.status.files, ws.config.min_tokens),
            threshold=ws.config.threshold,
            signature=ws.config.signature(),
            indexed_files=ws.status.files,
        )
        return _answer(result, present.check_text(result))


def _score_tool(server: MCPServer[Any], ws: Workspace) -> None:
    @_tool(server, "score")
    async def score(
        code: Code,
        ctx: Context[Any, Any],
        references: Annotated[
            list[Annotated[str, Field(max_length=MAX_CODE_CHARS)]] | Literal["auto"],
            Field(
                description='reference solutions to compare with (1 to 20 texts), or "auto": '
                "the most similar code of this repository"
            ),
        ] = "auto",
        language: Language = None,
        metrics: Annotated[
            list[Literal["bleu", "crystalbleu", "ruby"]] | None,
            Field(
                description='BLEU and CrystalBLEU are always given; "ruby" adds RUBY (token, '
                "syntax-tree and dependence-graph similarity; needs the ruby extra)"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, ScoreResult]:
        """Use it to measure how close code is to reference code (an AI suggestion to a solution).

        Also for two implementations of one task.

        Gives BLEU and CrystalBLEU (BLEU without the token sequences every program of the
        language shares, so that boilerplate does not count as agreement), RUBY when asked, the
        matches per n-gram length, and a signature naming the settings behind the numbers.
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
    @_tool(server, "file_clones")
    async def file_clones(
        path: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4096,
                description="the file, relative to the repository root (e.g. src/app/config.py)",
            ),
        ],
        ctx: Context[Any, Any],
        top: Annotated[int, Field(ge=1, le=100, description=Top)] = 20,
    ) -> Annotated[CallToolResult, FileClonesResult]:
        """Use it before editing or refactoring a file: which of its code is copied elsewhere.

        Lists the code of that file that is copied elsewhere in the repository, with the file
        and lines of every other copy, so that a fix reaches all of them (or the copies are
        merged into one).
        """
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
            f"crystal: {len(touching)} groups of copies ({copies} copies) have code in "
            f"{display_path(rel)}"
        )
        text = present.findings_text(touching, top, 0, ws.config.threshold, summary)
        return _answer(result, text)


def _scan_tool(server: MCPServer[Any], ws: Workspace) -> None:
    @_tool(server, "scan")
    async def scan(
        ctx: Context[Any, Any],
        new_since: Annotated[
            str | None,
            Field(
                default=None,
                max_length=256,
                description="a git revision (e.g. origin/main, HEAD~3): only copies touching "
                "code changed since it, what a branch or pull request adds (default: the whole "
                "repository)",
            ),
        ] = None,
        top: Annotated[int, Field(ge=1, le=100, description=Top)] = 10,
    ) -> Annotated[CallToolResult, ScanToolResult]:
        """Use it to review a change or the whole repository for duplicated code.

        Gives the groups of copies, the most copied code first, with their files and lines and
        how many files were looked at. With new_since, only the copies a branch or pull request
        adds or touches.
        """
        scanned = await _on_worker(ws, ctx, ws.scan, new_since)
        result = present.scan_result(scanned, top, new_since)
        text = present.findings_text(
            scanned.findings,
            top,
            scanned.files,
            ws.config.threshold,
            show_all=ws.config.show_similar,
        )
        return _answer(result, text)


def _trivial_tool(server: MCPServer[Any], ws: Workspace) -> None:
    @_tool(server, "trivially_shared")
    async def trivially_shared(
        language: Annotated[
            str, Field(min_length=1, max_length=64, description="a language, e.g. python")
        ],
        ctx: Context[Any, Any],
        top: Annotated[
            int,
            Field(ge=0, le=1000, description="how many of the most frequent to list (0: none)"),
        ] = 50,
    ) -> Annotated[CallToolResult, TriviallySharedResult]:
        """Use it to see what counts as boilerplate for a language, and so is never a copy.

        The token sequences any two programs of the language share (such as ") ;" or
        "self . assertEqual ("), which CrystalBLEU and the duplicate search ignore: why
        look-alike code is not reported as a copy.
        """
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
        where = {
            "index": "counted in this repository",
            "built-in": "the built-in list",
            "none": "no code of it here, no built-in list",
        }
        text = (
            f"{len(sset)} token sequences every {lang} program shares, ignored as boilerplate "
            f"({where.get(source, source)}); most frequent: "
            + (" | ".join(display_path(" ".join(g)) for g, _ in ranked[:10]) or "(none)")
        )
        return _answer(result, text)

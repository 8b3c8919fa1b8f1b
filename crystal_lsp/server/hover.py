"""Hover on a flagged snippet: its copies, their scores and the n-grams they share.

The shared n-grams are the non-trivial ones (not in the language's S set), so the hover shows
*why* two snippets count as copies, not the boilerplate every function of the language has.
"""

from __future__ import annotations

from crystal_lsp.server.buffers import DocResult
from crystal_lsp.server.diagnostics import Flag, describe, signature_of
from crystal_lsp.server.workspace import Folder

MAX_NGRAMS = 8


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def hover_markdown(folder: Folder, result: DocResult, flag: Flag) -> str:
    """Markdown describing a flagged snippet's clone class (worker thread)."""
    finding = flag.finding
    here = flag.here
    config = folder.config
    similarity = folder.finder.similarity(result.language)
    mine = folder.tokens_of(here)
    lines = [
        f"**crystal: {finding.type} copy** of {describe(here) or 'this code'} "
        f"({len(finding.locations)} copies in the clone class, {finding.language})",
        "",
        "| other copy | similarity | CrystalBLEU | BLEU |",
        "|---|---|---|---|",
    ]
    shared: list[list[str]] = []
    pairs = sorted(
        (p for p in finding.pairs if flag.location in (p.a, p.b)),
        key=lambda p: -p.similarity,
    )
    for pair in pairs:
        other = finding.locations[flag.other(pair)]
        theirs = folder.tokens_of(other)
        score = "–"
        if mine and theirs:
            score = f"{similarity.bleu(mine, theirs):.3f}"
            if not shared:
                shared = similarity.shared_ngrams(mine, theirs, n=config.max_n, limit=MAX_NGRAMS)
        uri = folder.uri_of(other.path)
        label = f"{other.path}:{other.first_line}"
        link = f"[{_cell(label)}]({uri}#L{other.first_line})" if uri else _cell(label)
        what = describe(other)
        lines.append(
            f"| {link}{' ' + _cell(what) if what else ''} | {pair.similarity:.3f} | "
            f"{max(pair.crystalbleu, 0.0):.3f} | {score} |"
        )
    if shared:
        lines += [
            "",
            "Shared non-trivial n-grams (not in the trivially shared set S):",
            "",
            *[f"- `{_cell(' '.join(gram))}`" for gram in shared],
        ]
    lines += [
        "",
        "similarity: CrystalBLEU of the normalized view (identifiers and literals abstracted), "
        "lower direction; CrystalBLEU and BLEU on the raw tokens.",
        "",
        f"`{signature_of(folder, result.language)}`",
    ]
    return "\n".join(lines)

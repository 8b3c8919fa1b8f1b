"""Hover on a flagged copy: the copy it is compared with, the alignment, and why they match.

The hover names the other copy of the pair (for a member of the clone class its representative,
for the representative its most similar member) with its lines, the pair's scores and copied
tokens and the class's size, then shows the lines of both copies that correspond, side by side
(:mod:`crystal_lsp.server.alignment`), the other copies of the class, and the non-trivial
n-grams the pair shares (not in the language's S set): *why* the two count as copies, not the
boilerplate every function of the language has.
"""

from __future__ import annotations

from crystal_lsp.clones.findings import Finding, Location, display_path
from crystal_lsp.server.alignment import LEGEND, align, excerpt, lines_of, pick
from crystal_lsp.server.buffers import DocResult
from crystal_lsp.server.diagnostics import Flag, signature_of
from crystal_lsp.server.workspace import Folder

MAX_NGRAMS = 8
MAX_COPIES = 10


def _cell(text: str) -> str:
    """Untrusted text (a name from the repository) for a Markdown table cell, escaped."""
    return display_path(text).replace("|", "\\|").replace("`", "'")


def _lines(location: Location) -> str:
    return f"{display_path(location.path)}:{location.first_line}-{location.last_line}"


def _link(folder: Folder, location: Location, label: str) -> str:
    uri = folder.uri_of(location.path)
    return f"[{_cell(label)}]({uri}#L{location.first_line})" if uri else _cell(label)


def _role(finding: Finding, index: int) -> str:
    return "the representative" if index == finding.representative else "a member"


def _why(finding: Finding, index: int) -> str:
    """Why this other copy is the one shown."""
    return "the representative of the class" if index == finding.representative else "closest"


def hover_markdown(folder: Folder, result: DocResult, flag: Flag, text: str) -> str:
    """Markdown describing a flagged copy and its alignment (worker thread).

    ``text``: the document's text in the version ``flag`` was found in.
    """
    finding, here = flag.finding, flag.here
    pair = flag.best_pair()
    j = flag.other(pair)
    other = finding.locations[j]
    mine, theirs = folder.tokens_of(here), folder.tokens_of(other)
    similarity = folder.finder.similarity(result.language)
    bleu = f", BLEU {similarity.bleu(mine, theirs):.3f}" if mine and theirs else ""
    what = here.describe() or "this code"
    lines = [
        f"**crystal: {finding.type} copy** — {_cell(what)} ({_cell(_lines(here))}, "
        f"{finding.language})",
        "",
        f"- other copy: {_link(folder, other, _lines(other))} "
        f"{_cell(other.describe())} ({_why(finding, j)})",
        f"- similarity **{pair.similarity:.3f}**, CrystalBLEU {max(pair.crystalbleu, 0.0):.3f}"
        f"{bleu}, {pair.copied} copied tokens",
        f"- clone class: {len(finding.locations)} copies, lowest similarity {finding.score:.3f}"
        f" (this copy is {_role(finding, flag.location)})",
        "",
        *_alignment(folder, here, other, text),
        *_copies(folder, flag, j),
    ]
    if mine and theirs:
        config = folder.config
        shared = similarity.shared_ngrams(mine, theirs, n=config.max_n, limit=MAX_NGRAMS)
        if shared:
            lines += [
                "Shared non-trivial n-grams (not in the trivially shared set S):",
                "",
                *[f"- `{_cell(' '.join(gram))}`" for gram in shared],
                "",
            ]
    lines += [
        "*similarity* (what `crystalLsp.threshold` is compared with): CrystalBLEU of the "
        "normalized view (identifiers and literals abstracted), lower direction; *CrystalBLEU* "
        "and *BLEU*: the raw tokens, so a renamed copy keeps a high similarity and a lower "
        "CrystalBLEU.",
        "",
        f"`{signature_of(folder, result.language)}`",
    ]
    return "\n".join(lines)


def _alignment(folder: Folder, here: Location, other: Location, text: str) -> list[str]:
    """The corresponding lines of the two copies, side by side (empty if unreadable)."""
    there_text = text if other.path == here.path else folder.text_of(other.path)
    if there_text is None:
        return []
    rows = align(lines_of(folder, here, text), lines_of(folder, other, there_text))
    if not rows:
        return []
    titles = (f"this copy ({display_path(here.path)})", f"other copy ({display_path(other.path)})")
    head = "Corresponding lines:"
    shown = len(pick(rows))
    if shown < len(rows):
        head = f"Corresponding lines (showing {shown} of {len(rows)}, differing ones kept):"
    return [head, "", excerpt(rows, text, there_text, titles), "", LEGEND, ""]


def _copies(folder: Folder, flag: Flag, featured: int) -> list[str]:
    """A table of the class's other copies (when there are more than the pair)."""
    finding = flag.finding
    rest = [k for k in range(len(finding.locations)) if k not in (flag.location, featured)]
    if not rest:
        return []
    to_rep = {p.b if p.a == finding.representative else p.a: p for p in finding.pairs}
    out = [
        "Other copies in the clone class:",
        "",
        "| copy | similarity to the representative | copied tokens |",
        "|---|---|---|",
    ]
    for k in rest[:MAX_COPIES]:
        location = finding.locations[k]
        label = f"{_link(folder, location, location.label())} {_cell(location.describe())}"
        p = to_rep.get(k)
        if k == finding.representative or p is None:
            out.append(f"| {label.rstrip()} | representative | |")
        else:
            out.append(f"| {label.rstrip()} | {p.similarity:.3f} | {p.copied} |")
    if len(rest) > MAX_COPIES:
        out.append(f"| … {len(rest) - MAX_COPIES} more | | |")
    return [*out, ""]

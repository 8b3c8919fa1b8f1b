"""Hover on a flagged copy: the copy it is compared with, the alignment, and why they match.

The hover names the other copy of the pair (for a member of the clone class its representative,
for the representative its most similar member) with its lines, the pair's scores and copied
tokens and the class's size, then the lines of both copies that correspond, as a narrow diff
(:mod:`crystal_lsp.server.alignment`) under a one-line head with a *compare* link that opens both
copies in the editor's diff view (``crystal.compare``), the other copies of the class, and the
non-trivial n-grams the pair shares (not in the language's S set): *why* the two count as copies,
not the boilerplate every function of the language has.

Everything taken from the repository (file and unit names, code) is untrusted: names are escaped
(:func:`md_text`: every ASCII punctuation character CommonMark knows, after
:func:`~crystal_lsp.clones.findings.display_path`), code sits in code spans or a fenced block it
cannot close, link targets are percent-encoded, and the trusted *compare* command link carries
only an id the server minted (:data:`~crystal_lsp.server.compare.COMPARE_IDS`), never a path.
"""

from __future__ import annotations

import json
import re
import string
from urllib.parse import quote

from lsprotocol import types

from crystal_lsp.clones.copies.levels import DIFFERING
from crystal_lsp.clones.findings import Finding, Location, display_path
from crystal_lsp.server.alignment import HOVER_ROWS, align, diff_excerpt, lines_of, pick
from crystal_lsp.server.buffers import DocResult
from crystal_lsp.server.compare import COMPARE, COMPARE_IDS, compare_spec
from crystal_lsp.server.diagnostics import Flag, LocationRanges, signature_of
from crystal_lsp.server.workspace import Folder

MAX_NGRAMS = 8
MAX_COPIES = 10


_PUNCTUATION = frozenset(string.punctuation)
"""CommonMark's ASCII punctuation: each may be backslash-escaped, and each may start markup."""
_URI_UNSAFE = re.compile(r"[^A-Za-z0-9\-._~:/?#@!$&'*+,;=%]")


def md_text(text: str) -> str:
    """Untrusted text (a name from the repository) as Markdown that shows it and nothing else."""
    return "".join("\\" + c if c in _PUNCTUATION else c for c in display_path(text))


def _code(text: str) -> str:
    """Untrusted text for a code span: one line (display_path), no backtick to close it."""
    return display_path(text).replace("`", "'")


def _uri(uri: str) -> str:
    """A link target that cannot end the link early: brackets, spaces and the like encoded."""
    return _URI_UNSAFE.sub(
        lambda m: quote(m.group().encode("utf-8", "surrogateescape"), safe=""), uri
    )


def _lines(location: Location) -> str:
    return f"{md_text(location.path)}:{location.first_line}-{location.last_line}"


def _link(folder: Folder, location: Location, label: str) -> str:
    """A link to a location; ``label`` is Markdown already escaped."""
    uri = folder.uri_of(location.path)
    return f"[{label}]({_uri(uri)}#L{location.first_line})" if uri else label


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
    link = _compare_link(folder, flag, other)
    lines = [
        # one line above the diff: a hover is 250 px high, the diagnostic's own part above it
        f"**crystal: {finding.type} copy** · `-` {_link(folder, other, _lines(other))} · `+` "
        f"this copy · similarity **{pair.similarity:.3f}** · CrystalBLEU "
        f"{max(pair.crystalbleu, 0.0):.3f}{' · ' + link if link else ''}",
        "",
        *_alignment(folder, flag, other, text),
        f"- this copy: {md_text(what)} ({_lines(here)}, {md_text(finding.language)})",
        f"- other copy: {_link(folder, other, _lines(other))} "
        f"{md_text(other.describe())} ({_why(finding, j)})",
        f"- {pair.copied} copied tokens{bleu}",
        *[f"- {md_text(e)}" for e in finding.evidence if e.startswith(DIFFERING)],
        f"- clone class: {len(finding.locations)} copies, lowest similarity {finding.score:.3f}"
        f" (this copy is {_role(finding, flag.location)})",
        "",
        *_copies(folder, flag, j),
    ]
    if mine and theirs:
        config = folder.config
        shared = similarity.shared_ngrams(mine, theirs, n=config.max_n, limit=MAX_NGRAMS)
        if shared:
            lines += [
                "Shared non-trivial n-grams (not in the trivially shared set S):",
                "",
                *[f"- `{_code(' '.join(gram))}`" for gram in shared],
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


def _alignment(folder: Folder, flag: Flag, other: Location, text: str) -> list[str]:
    """The corresponding lines of the two copies, as a diff (empty if unreadable)."""
    here = flag.here
    there_text = text if other.path == here.path else folder.text_of(other.path)
    if there_text is None:
        return []
    rows = align(lines_of(folder, here, text), lines_of(folder, other, there_text))
    if not rows:
        return []
    shown = len(pick(rows, HOVER_ROWS))
    out = [diff_excerpt(rows, text, there_text), ""]
    if shown < len(rows):
        out += [f"*{shown} of {len(rows)} corresponding lines, the differing ones kept.*", ""]
    return out


def _compare_link(folder: Folder, flag: Flag, other: Location) -> str:
    """A command link opening both copies in the editor's diff view (``crystal.compare``)."""
    here = flag.here
    target = LocationRanges(folder, None).resolve(other)
    uri = folder.uri_of(here.path)
    if target is None or uri is None:
        return ""
    mine = types.Location(uri=uri, range=flag.range)
    spec = compare_spec(target, other.label(), mine, here.label())
    return f"[compare](command:{COMPARE}?{quote(json.dumps([{'id': COMPARE_IDS.mint(spec)}]))})"


def _copies(folder: Folder, flag: Flag, featured: int) -> list[str]:
    """A table of the class's other copies (when there are more than the pair)."""
    finding = flag.finding
    rest = [k for k in range(len(finding.locations)) if k not in (flag.location, featured)]
    if not rest:
        return []
    rep = finding.representative
    to_rep = {p.b if p.a == rep else p.a: p for p in finding.pairs if rep in (p.a, p.b)}
    out = [
        "Other copies in the clone class:",
        "",
        "| copy | similarity to the representative | copied tokens |",
        "|---|---|---|",
    ]
    for k in rest[:MAX_COPIES]:
        location = finding.locations[k]
        place = f"{md_text(location.path)}:{location.first_line}"
        label = f"{_link(folder, location, place)} {md_text(location.describe())}"
        p = to_rep.get(k)
        if k == rep or p is None:  # a member of a joined copy may be paired with others only
            out.append(f"| {label.rstrip()} | {'representative' if k == rep else '-'} | |")
        else:
            out.append(f"| {label.rstrip()} | {p.similarity:.3f} | {p.copied} |")
    if len(rest) > MAX_COPIES:
        out.append(f"| … {len(rest) - MAX_COPIES} more | | |")
    return [*out, ""]

"""Two copies side by side: the texts behind the ``crystal.compare`` command.

Its argument, ``{"title", "left": {"uri", "range", "label"}, "right": {...}, "goTo"?}``, names
two ranges: the other copy (or an inserted block's closest region) on the left, this copy on the
right. Code lenses of inserted blocks and the *Compare with the other copy* code action send it.
The answer holds both ranges' text, whole lines, read as ``crystal/score`` reads files (open
buffers first, files only inside the workspace folders), for a client's own diff view: the VS
Code extension opens ``vscode.diff`` on them, Neovim a recipe (README). Unless ``"goTo":
false``, the server also shows the left range as *Go to the other copy* does, so a client
without a diff view still gets to the other copy.

A renamed copy differs from its original on nearly every line, so the answer also holds the
renaming (:mod:`crystal_lsp.clones.reports.renames`): ``renaming``, the ``[original's name,
copy's name]`` pairs; ``right.mapped``, the right text with the copy's names turned back into the
original's; and ``header``, comment lines of the right side's language listing the renaming (empty
when nothing was renamed). The VS Code extension shows the left text and the mapped right text,
both under the header, so the diff shows only what differs beyond the renaming.

The hover's *compare* link is a trusted command link (VS Code runs it on a click), so it carries
no path: only ``{"id"}``, an opaque id the server minted for the pair it showed
(:data:`COMPARE_IDS`, bounded) and looks up here; an unknown id is refused.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from crystal_lsp.clones.findings import display_path
from crystal_lsp.clones.reports.renames import Tokens, mapped_back, renaming
from crystal_lsp.errors import CrystalError
from crystal_lsp.server.landing import lines_of
from crystal_lsp.server.score_request import read_spec
from crystal_lsp.server.scoring import ScoreError, parse_range
from crystal_lsp.server.uris import to_fs_path
from crystal_lsp.text.comments import comment_for
from crystal_lsp.text.entries import lex_file

if TYPE_CHECKING:
    from crystal_lsp.server.core.interface import Core

COMPARE = "crystal.compare"
MAX_LINES = 5_000
"""Lines of one side answered (beyond: cut, and ``truncated`` says so)."""


HEADER_WIDTH = 64
"""Characters of a line of the renaming's header before the next pair goes on a new line (one
side of a diff view is narrow)."""
MAX_IDS = 1_024
"""Compare ids remembered (the oldest forgotten first: its link then asks to hover again)."""


class CompareIds:
    """Opaque ids of ``crystal.compare`` arguments the server minted (thread-safe, bounded)."""

    def __init__(self, limit: int = MAX_IDS) -> None:
        self.limit = limit
        self._specs: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def mint(self, spec: dict[str, Any]) -> str:
        """A fresh id standing for ``spec``."""
        key = secrets.token_hex(8)
        with self._lock:
            self._specs[key] = spec
            while len(self._specs) > self.limit:
                self._specs.popitem(last=False)
        return key

    def get(self, key: str) -> dict[str, Any] | None:
        """The spec an id stands for (None: unknown or forgotten)."""
        with self._lock:
            return self._specs.get(key)


COMPARE_IDS = CompareIds()
"""The ids of hover links (the hover is built in worker threads of every folder)."""


def resolve_id(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """A ``{"id", "goTo"?}`` argument as the spec it stands for; other arguments as given."""
    if "id" not in spec:
        return spec
    key = spec["id"]
    found = COMPARE_IDS.get(key) if isinstance(key, str) else None
    if found is None:
        raise JsonRpcInvalidParams(f"{COMPARE}: unknown or expired id (hover over the copy again)")
    return {**found, **({"goTo": spec["goTo"]} if "goTo" in spec else {})}


def range_json(rng: types.Range) -> dict[str, dict[str, int]]:
    """The JSON form of an LSP range."""
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def compare_spec(
    left: types.Location, left_label: str, right: types.Location, right_label: str
) -> dict[str, Any]:
    """The argument of ``crystal.compare`` for two ranges (left: the other copy)."""
    return {
        "title": f"{left_label} ↔ {right_label}",
        "left": {"uri": left.uri, "range": range_json(left.range), "label": left_label},
        "right": {"uri": right.uri, "range": range_json(right.range), "label": right_label},
    }


def lines_in(text: str, rng: types.Range) -> tuple[str, bool]:
    """The whole LSP lines a range covers (a range ending at column 0 ends the line before)."""
    lines = lines_of(text)
    last = rng.end.line - (1 if rng.end.character == 0 and rng.end.line > rng.start.line else 0)
    first = max(rng.start.line, 0)
    last = min(max(last, first), len(lines) - 1)
    count = last - first + 1
    chosen = lines[first : first + min(count, MAX_LINES)]
    return "\n".join(chosen) + "\n", count > MAX_LINES


def compare_texts(ls: Core, spec: Any) -> dict[str, Any]:
    """Both sides of a ``crystal.compare`` argument with their texts (raises invalid params)."""
    if not isinstance(spec, Mapping):
        raise JsonRpcInvalidParams(f"{COMPARE}: expected one object argument")
    spec = resolve_id(spec)
    out: dict[str, Any] = {}
    for side in ("left", "right"):
        value = spec.get(side)
        if not isinstance(value, Mapping) or not isinstance(value.get("uri"), str):
            raise JsonRpcInvalidParams(f"{COMPARE}: {side} must be {{uri, range}}")
        try:
            rng = parse_range(value.get("range"))
            text, uri = read_spec(ls, {"uri": value["uri"]}, side)
        except ScoreError as exc:
            raise JsonRpcInvalidParams(f"{COMPARE}: {exc}") from None
        label = value.get("label")
        if not isinstance(label, str):
            label = f"{uri}:{rng.start.line + 1}"
        shown, truncated = lines_in(text, rng)
        out[side] = {
            "uri": uri,
            "range": value["range"],
            "label": display_path(label),
            "text": shown,
            "truncated": truncated,
        }
    title = spec.get("title")
    out["title"] = display_path(
        title if isinstance(title, str) else f"{out['left']['label']} ↔ {out['right']['label']}"
    )
    add_renaming(out)
    return out


def lexed(uri: str, text: str) -> tuple[str, Tokens] | None:
    """The language and tokens of a side's text, lexed as its file (None: it cannot be)."""
    try:
        language, heavy = lex_file(to_fs_path(uri) or uri, text, None)
    except (CrystalError, ValueError):
        return None
    return language, Tokens(heavy.texts, heavy.cats, heavy.starts, heavy.lines)


def add_renaming(out: dict[str, Any]) -> None:
    """Add the renaming of the right side (the copy) from the left (module docstring)."""
    left, right = out["left"], out["right"]
    original, copy = lexed(left["uri"], left["text"]), lexed(right["uri"], right["text"])
    pairs = renaming(original[1], copy[1]) if original and copy and original[0] == copy[0] else []
    out["renaming"] = [list(pair) for pair in pairs]
    right["mapped"] = (
        mapped_back(right["text"], copy[1], pairs) if copy and pairs else right["text"]
    )
    out["header"] = renaming_header(pairs, copy[0] if copy else "")


def renaming_header(pairs: list[tuple[str, str]], language: str) -> str:
    """Comment lines listing a renaming (empty without one), each ending with a newline."""
    if not pairs:
        return ""
    prefix, suffix = comment_for(language)
    words = [f"{x} → {y}" for x, y in pairs]
    lines = [f"crystal: renamed in the copy ({len(pairs)}), shown as the original's:"]
    for word in words:
        if len(lines) > 1 and len(lines[-1]) + len(word) + 2 <= HEADER_WIDTH:
            lines[-1] += f", {word}"
        else:
            lines.append(f"  {word}")
    return "".join(f"{prefix} {line}{suffix}\n" for line in lines)

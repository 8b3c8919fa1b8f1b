"""Every Pygments lexer the executor runs gives Pygments' tokens (or raises what Pygments raises)."""

from __future__ import annotations

from typing import Any

import pytest
from fastlex_samples import FRAGMENTS
from pygments.lexers import get_all_lexers, get_lexer_by_name

from crystal_lsp.text.fastlex import get_tokens, program_for

TEXT = "".join(FRAGMENTS) + "".join(reversed(FRAGMENTS))
ALIASES = sorted(aliases[0] for _name, aliases, _f, _m in get_all_lexers() if aliases)


def _outcome(tokens: Any) -> Any:
    try:
        return list(tokens())
    except Exception as exc:  # a lexer that fails must fail the same way
        return ("raised", type(exc).__name__)


@pytest.mark.slow
def test_every_compiled_lexer_gives_pygments_tokens() -> None:
    compiled, differing = 0, []
    for alias in ALIASES:
        lexer = get_lexer_by_name(alias, stripnl=False, ensurenl=False)
        if program_for(lexer) is None:
            continue
        compiled += 1
        ours = _outcome(lambda lexer=lexer: get_tokens(lexer, TEXT))
        if ours != _outcome(lambda lexer=lexer: lexer.get_tokens_unprocessed(TEXT)):
            differing.append(alias)
    assert compiled >= 400
    assert not differing, f"add to fastlex.select.FALLBACK_LEXERS: {differing}"

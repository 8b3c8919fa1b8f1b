"""``python -m crystal_lsp``: the ``crystal-lsp`` command."""

from __future__ import annotations

from crystal_lsp.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())

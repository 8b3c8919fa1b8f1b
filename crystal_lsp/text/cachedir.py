"""Where crystal-lsp keeps its caches: ``$CRYSTAL_LSP_CACHE_DIR``, else the user cache directory.

Never inside a repository. The index (:mod:`crystal_lsp.clones.store`) and the lexers' compiled
tables (:mod:`crystal_lsp.text.fastlex.tables`) live under it.
"""

from __future__ import annotations

import os

ENV_CACHE_DIR = "CRYSTAL_LSP_CACHE_DIR"


def cache_root() -> str:
    """The directory all crystal-lsp caches live in."""
    configured = os.environ.get(ENV_CACHE_DIR)
    if configured:
        return os.path.abspath(configured)
    import platformdirs

    return platformdirs.user_cache_dir("crystal-lsp", appauthor=False)

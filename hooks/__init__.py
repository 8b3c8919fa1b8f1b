"""Git and pre-commit hooks of crystal_lsp, installed as the ``crystal_lsp_hooks`` package."""

import os as _os
import sys as _sys

# `python -m crystal_lsp_hooks.clone_check` inside a repository: never import its modules
if _sys.argv[:1] == ["-m"] and _sys.path and _sys.path[0] in ("", _os.getcwd()):
    del _sys.path[0]

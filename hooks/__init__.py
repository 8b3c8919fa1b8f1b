"""Git and pre-commit hooks of crystal_lsp, installed as the ``crystal_lsp_hooks`` package."""

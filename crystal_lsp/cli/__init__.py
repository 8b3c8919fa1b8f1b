"""The ``crystal-lsp`` command line: one module per subcommand, dispatched from ``main``."""

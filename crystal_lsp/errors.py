"""The one domain exception of crystal_lsp and the exit codes it maps to."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class CrystalError(ValueError):
    """A problem with the user's input or settings, reported as one clear line.

    It derives from ``ValueError`` so that code written against NLTK or the
    ``crystalbleu`` package, which raise ``ValueError`` for bad input, keeps working.
    """

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code

"""The repository index: every file's tokens, units and fingerprints, and each language's S sets.

:class:`RepoIndex` (:mod:`.repo`) keeps them up to date incrementally; :mod:`.languagesets` builds
and keeps the S sets; :mod:`.retrieval` is the inverted index of non-trivial shingles.
"""

from crystal_lsp.clones.index.repo import RepoIndex
from crystal_lsp.clones.index.state import BuildJob, FileState, build_job
from crystal_lsp.clones.snapshot import Snapshot

__all__ = ["BuildJob", "FileState", "RepoIndex", "Snapshot", "build_job"]

"""The package version, in a module of its own so that any layer can import it without a cycle."""

from __future__ import annotations

__version__ = "0.1.0"

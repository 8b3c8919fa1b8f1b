"""Where the benchmarks' corpora are: the labeled data sets, read in place, and the caches kept
outside the project."""

from __future__ import annotations

import os

DEFAULT_DATA = "/work/shared/data"


DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "crystal-lsp-bench")


def dataset_path(data: str, name: str) -> str:
    return os.path.join(data, name, "items.jsonl.gz")

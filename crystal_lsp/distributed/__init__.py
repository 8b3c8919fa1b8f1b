"""Running the corpus-sized steps on an engine: in local processes or on a Dask cluster.

``sset build``, ``scan`` and ``disting`` spend their time in three steps that split into
independent pieces: tokenizing documents, counting their n-grams, and scoring pairs. This package
runs those pieces on an :class:`~crystal_lsp.distributed.engine.Engine`:

* :mod:`inputs`: the documents of files, directories, zip/tar archives and JSONL(.gz) shards,
  planned as small partition descriptors and read lazily where the partition is processed;
* :mod:`topk`: n-gram counting as a map-reduce whose top-k merge is exact (the proof is there);
* :mod:`engine`: ``LocalEngine`` (a process pool) and ``DaskEngine`` (a ``distributed`` client);
* :mod:`client`: connecting to a scheduler or starting a loopback ``LocalCluster``;
* :mod:`build`, :mod:`scan`, :mod:`disting`: the three commands on an engine, called with
  plain parameters (the ``--engine`` and ``--scheduler`` options live in :mod:`crystal_lsp.cli`).

Dask is optional (``pip install 'crystal-lsp[dask]'``) and imported only when the Dask engine
is used, so the core never needs it.
"""

from __future__ import annotations

from crystal_lsp.errors import CrystalError

ENGINES = ("local", "dask")


def engine_name(engine: str | None, scheduler: str | None) -> str:
    """The engine to use: the one named, else ``dask`` when a scheduler is given, else local."""
    name = engine or ("dask" if scheduler else "local")
    if name not in ENGINES:
        raise CrystalError(f"unknown engine {name!r} (use {' or '.join(ENGINES)})")
    if name == "local" and scheduler:
        raise CrystalError("--scheduler needs --engine dask")
    return name

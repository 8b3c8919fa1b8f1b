"""Connecting to a Dask cluster: a scheduler address, or a private cluster on this machine.

``--scheduler tcp://host:8786`` (or Dask's own ``DASK_SCHEDULER_ADDRESS``) connects to a running
cluster; without one, a ``LocalCluster`` of worker *processes* (Pygments holds the GIL, so
threads would not tokenize in parallel) is started on the loopback interface, without a
dashboard, and stopped afterwards.

Every worker must import the same ``crystal_lsp`` (tasks are module functions, pickled by
reference): :func:`connect` checks the workers' version and reports a mismatch as one line.
"""

from __future__ import annotations

import importlib
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from crystal_lsp.errors import CrystalError, missing_extra
from crystal_lsp.text.parallel import default_jobs
from crystal_lsp.version import __version__

INSTALL_HINT = "install crystal-lsp[dask]"
CONNECT_TIMEOUT = "30s"


def import_distributed() -> Any:
    """The ``distributed`` module, or a usage error saying what to install."""
    try:
        importlib.import_module("dask")
        return importlib.import_module("distributed")
    except ImportError as exc:
        raise missing_extra("--engine dask", "dask", exc) from None


def worker_info() -> dict[str, Any]:
    """What a worker runs (executed on each worker by :func:`connect`)."""
    import platform

    return {"crystal_lsp": __version__, "python": platform.python_version(), "pid": os.getpid()}


def default_scheduler() -> str | None:
    """The scheduler address configured for Dask (``DASK_SCHEDULER_ADDRESS``), if any."""
    dask: Any = importlib.import_module("dask")
    address = dask.config.get("scheduler-address", None)
    return str(address) if address else None


@contextmanager
def connect(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client``: of ``scheduler``, or of a loopback ``LocalCluster``."""
    distributed = import_distributed()
    address = scheduler or default_scheduler()
    with ExitStack() as stack:
        if address:
            try:
                client = distributed.Client(address, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise CrystalError(
                    f"cannot reach the Dask scheduler at {address} ({exc})"
                ) from None
        else:
            cluster = distributed.LocalCluster(
                n_workers=max(1, workers if workers is not None else default_jobs()),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
                local_directory=stack.enter_context(tempfile.TemporaryDirectory()),
            )
            stack.callback(cluster.close)
            client = distributed.Client(cluster)
        stack.callback(client.close)
        if address:
            try:
                client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError):
                raise CrystalError(f"the Dask cluster at {address} has no workers") from None
        check_workers(client, address)
        yield client


def check_workers(client: Any, address: str | None) -> None:
    """Fail with one clear line unless every worker runs this version of crystal_lsp."""
    where = address or "the local cluster"
    try:
        infos: dict[str, dict[str, Any]] = client.run(worker_info)
    except Exception as exc:  # the worker cannot unpickle crystal_lsp's function
        raise CrystalError(
            f"the Dask workers of {where} cannot run crystal-lsp tasks ({type(exc).__name__}: "
            f"{exc}); {INSTALL_HINT}=={__version__} on every worker"
        ) from None
    if not infos:
        raise CrystalError(f"the Dask cluster at {where} has no workers")
    wrong = sorted(
        f"{worker} has {info['crystal_lsp']}"
        for worker, info in infos.items()
        if info["crystal_lsp"] != __version__
    )
    if wrong:
        raise CrystalError(
            f"crystal-lsp versions differ on the Dask workers ({'; '.join(wrong)}; this client "
            f"has {__version__}): {INSTALL_HINT}=={__version__} on every worker"
        )

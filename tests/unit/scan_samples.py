"""Source code for the clone-finder tests: one realistic function, its copies, and decoys.

``ORIGINAL`` is a 21-line Python function. ``renamed`` renames every local name consistently
(attributes after ``.`` keep their names, as a copy-and-rename does), ``near_copy`` renames and
then inserts one statement and deletes another. ``UNRELATED`` functions share the language's
vocabulary but not the logic; ``GETTERS_A``/``GETTERS_B``, ``ALL_LIST`` and ``IMPORTS`` are boilerplate that two
files of a repository share without either being a copy worth reporting. ``filler`` makes a
file whose index entry is big enough for diskcache to keep it in a file of its own.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
from collections.abc import Mapping

ORIGINAL = '''def summarize_orders(orders, region, limit=10):
    """Totals per customer of the shipped orders of one region, largest first."""
    totals = {}
    skipped = 0
    for order in orders:
        if order.region != region:
            continue
        if order.status not in ("shipped", "delivered"):
            skipped += 1
            continue
        amount = order.quantity * order.unit_price
        if order.coupon is not None:
            amount -= amount * order.coupon.rate
        customer = order.customer.strip().lower()
        totals[customer] = totals.get(customer, 0) + amount
    ranked = sorted(totals.items(), key=lambda item: item[1], reverse=True)
    report = []
    for customer, amount in ranked[:limit]:
        report.append(f"{customer:<20} {amount:>12.2f}")
    report.append(f"skipped {skipped} orders")
    return "\\n".join(report)
'''

# a small function the server, MCP and editor tests paste and rename
MERGE_INTERVALS = '''\
def merge_intervals(intervals):
    """Merge overlapping intervals."""
    ordered = sorted(intervals, key=lambda pair: pair[0])
    merged = []
    for start, end in ordered:
        if merged and start <= merged[-1][1]:
            last_start, last_end = merged[-1]
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    total = 0
    for start, end in merged:
        total += end - start
    return merged, total
'''

RENAMES = {
    "summarize_orders": "tally_invoices",
    "orders": "invoices",
    "order": "invoice",
    "region": "zone",
    "limit": "top",
    "totals": "sums",
    "skipped": "ignored",
    "amount": "value",
    "customer": "client",
    "ranked": "ordered",
    "report": "lines",
    "item": "pair",
}
_NAME = re.compile(r"(?<![.\w])(" + "|".join(RENAMES) + r")\b")


def renamed(source: str = ORIGINAL) -> str:
    """``source`` with every local name renamed consistently (attributes untouched)."""
    return _NAME.sub(lambda m: RENAMES[m.group(1)], source)


def near_copy(source: str = ORIGINAL) -> str:
    """Renamed, plus one inserted statement and one deleted statement."""
    out = renamed(source)
    out = out.replace(
        "        client = invoice.customer.strip().lower()\n",
        "        client = invoice.customer.strip().lower()\n        audit.record(invoice.number)\n",
    )
    out = out.replace("            ignored += 1\n", "")
    assert out.count("\n") == source.count("\n")
    return out


UNRELATED = [
    '''def parse_settings(path, defaults=None):
    """Read KEY=VALUE lines, skipping comments, into a dict of typed values."""
    values = dict(defaults or {})
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            if "=" not in text:
                raise ValueError(f"{path}:{number}: expected KEY=VALUE")
            key, _, value = text.partition("=")
            key = key.strip().upper()
            if value.isdigit():
                values[key] = int(value)
            elif value.lower() in ("true", "false"):
                values[key] = value.lower() == "true"
            else:
                values[key] = value.strip().strip('"')
    return values
''',
    '''def retry_download(client, url, attempts=5, backoff=0.5):
    """Fetch a URL, retrying transient failures with exponential backoff."""
    delay = backoff
    last_error = None
    for attempt in range(1, attempts + 1):
        try:
            response = client.get(url, timeout=30)
            if response.status_code == 429:
                raise RuntimeError("rate limited")
            response.raise_for_status()
            return response.content
        except (OSError, RuntimeError) as error:
            last_error = error
            log.warning("attempt %d of %d failed: %s", attempt, attempts, error)
            time.sleep(delay)
            delay = min(delay * 2, 30.0)
    raise ConnectionError(f"giving up on {url}") from last_error
''',
    '''def transpose_matrix(rows):
    """Transpose a rectangular list of lists, checking that every row has one width."""
    if not rows:
        return []
    width = len(rows[0])
    for index, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"row {index} has {len(row)} columns, expected {width}")
    columns = [[] for _ in range(width)]
    for row in rows:
        for column, cell in zip(columns, row):
            column.append(cell)
    result = []
    for column in columns:
        result.append(tuple(column))
    return result
''',
]

IMPORTS = """import collections
import dataclasses
import functools
import itertools
import json
import logging
import os
import pathlib
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Callable, Optional
"""

ALL_LIST = """__all__ = [
    "alpha_value",
    "beta_value",
    "gamma_value",
    "delta_value",
    "epsilon_value",
    "zeta_value",
    "eta_value",
    "theta_value",
    "iota_value",
    "kappa_value",
    "lambda_value",
    "mu_value",
    "nu_value",
    "xi_value",
]
"""


def getters(class_name: str, fields: list[str]) -> str:
    """A model class made of one property getter per field (boilerplate of every model)."""
    init = "".join(f"        self._{name} = {name}\n" for name in fields)
    body = "".join(
        f"    @property\n    def {name}(self):\n        return self._{name}\n\n" for name in fields
    )
    return f"class {class_name}:\n    def __init__(self, {', '.join(fields)}):\n{init}\n{body}"


GETTERS_A = getters("Customer", ["name", "email", "phone", "street", "city", "country", "notes"])
GETTERS_B = getters("Product", ["sku", "title", "price", "weight", "color", "stock", "brand"])


def module(*parts: str) -> str:
    """Join top-level blocks with two blank lines, as a formatter would."""
    return "\n\n".join(p.rstrip("\n") + "\n" for p in parts)


def write_tree(root: pathlib.Path, files: Mapping[str, str | bytes]) -> pathlib.Path:
    """Create ``files`` (relative path → text or bytes) under ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def git(root: pathlib.Path, *args: str) -> str:
    """Run git in ``root`` hermetically and return its stdout."""
    done = subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout


def git_init(root: pathlib.Path) -> pathlib.Path:
    """A git repository at ``root`` with everything in it committed."""
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial", "--allow-empty")
    return root


def filler(count: int) -> str:
    """``count`` distinct small functions (each a snippet), for a file with a large index entry."""
    parts = []
    for i in range(count):
        parts.append(
            f"def step_{i}(value_{i}, scale_{i}=1):\n"
            f"    first_{i} = value_{i}.field_{i} * {i * 7919 % 1009} + scale_{i}.unit_{i % 17}\n"
            f"    second_{i} = first_{i} // {i % 13 + 2} - {i * 31 % 97}\n"
            f"    third_{i} = [first_{i}, second_{i}, value_{i} % {i % 7 + 3}]\n"
            f"    fourth_{i} = {{'k{i}': third_{i}, 'scale': scale_{i} + {i % 5}}}\n"
            f"    if fourth_{i}['scale'] > {i % 11}:\n"
            f"        third_{i}.append_{i}(fourth_{i}['scale'] - {i})\n"
            f"    return sum(third_{i}) + len(third_{i}) * {i}\n"
        )
    return module(*parts)


# --- running the clone finder on a tree ------------------------------------------------------
from crystal_lsp.clones.finder import CloneFinder, LanguageResult  # noqa: E402
from crystal_lsp.clones.findings import Finding  # noqa: E402
from crystal_lsp.clones.index import RepoIndex  # noqa: E402
from crystal_lsp.clones.settings import ScanConfig  # noqa: E402
from crystal_lsp.clones.store import Store  # noqa: E402


def find_results(
    root: pathlib.Path,
    files: Mapping[str, str | bytes],
    overrides: Mapping[str, bytes] | None = None,
    **settings: object,
) -> dict[str, LanguageResult]:
    """Write ``files`` under ``root`` and run the clone finder on them: results by language.

    The index's cache lives next to ``root`` (``<root>-cache``); ``settings`` are
    :class:`~crystal_lsp.clones.settings.ScanConfig` fields.
    """
    write_tree(root, files)
    with Store(str(root.parent / f"{root.name}-cache")) as store:
        index = RepoIndex(str(root), ScanConfig(**settings), store, jobs=1)  # type: ignore[arg-type]
        index.refresh(sorted(files), overrides)
        return dict(CloneFinder(index).find())


def find_all(
    root: pathlib.Path,
    files: Mapping[str, str | bytes],
    overrides: Mapping[str, bytes] | None = None,
    **settings: object,
) -> list[Finding]:
    """The findings of :func:`find_results`, every language's together."""
    results = find_results(root, files, overrides, **settings)
    return [finding for result in results.values() for finding in result.findings]

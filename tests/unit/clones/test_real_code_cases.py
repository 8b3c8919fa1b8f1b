"""The clone finder on the cases real repositories showed: what it must find, and what it must not.

Found: one function copied into more files than ``max_df`` (only whole-unit digests see it), a
block copied into two otherwise different long functions (reported as lines of each), a
function extended after copying, identical files (one finding of kind ``file``). Not found:
code that only normalization makes alike (tables of constants, functions with the same shape
but unrelated names and literals), overload stubs, a shared ``parametrize`` table, and copies
marked ``crystal: ignore``.
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping

import pytest
from scan_samples import (
    ORIGINAL,
    UNRELATED,
    find_all,
    find_results,
    module,
    near_copy,
    renamed,
    write_tree,
)

from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.findings import EXACT, LINES, RENAMED, Finding
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.similarity import RAW_MIN, RENAMING_MIN
from crystal_lsp.clones.store import Store

N = ORIGINAL.count("\n")


def spans(finding: Finding) -> list[tuple[str, int, int]]:
    return sorted((loc.path, loc.first_line, loc.last_line) for loc in finding.locations)


def first_line_of(source: str, line: str) -> int:
    """The 1-based number of the first line of ``source`` equal to ``line``."""
    return source.splitlines().index(line) + 1


# --- (a) one function in more files than max_df ----------------------------------------------


def helper(i: int) -> str:
    return f"def helper_{i}(value):\n    return value * {i} + {i * 7}\n"


@pytest.mark.parametrize("renamed_share", [0, 25], ids=["exact", "half-renamed"])
def test_a_function_in_51_files_is_one_finding(tmp_path: pathlib.Path, renamed_share: int) -> None:
    copies = 51
    files = {
        f"pkg/mod{i:02d}.py": module(helper(i), renamed() if i < renamed_share else ORIGINAL)
        for i in range(copies)
    }
    result = find_results(tmp_path / "repo", files, max_df=50)["python"]
    (finding,) = result.findings
    assert len(finding.locations) == copies
    assert sorted(loc.path for loc in finding.locations) == sorted(files)
    assert {loc.kind for loc in finding.locations} == {"function"}
    assert {(loc.first_line, loc.last_line) for loc in finding.locations} == {(5, 4 + N)}
    assert len(finding.pairs) == copies - 1 and finding.score == 1.0
    assert finding.type == (EXACT if renamed_share == 0 else RENAMED)
    # every seed of the function occurs in 51 files, more than max_df: no chain aligned it,
    # the digests of whole units found it
    assert result.candidates == 0


# --- (b) a block copied into two long functions ----------------------------------------------

BLOCK = """    totals = {}
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
"""
BLOCK_LINES = BLOCK.count("\n")

EXPORT_MAIN = (
    """def main(argv=None):
    parser = argparse.ArgumentParser(description="Export the orders of one region.")
    parser.add_argument("region")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--output", default="-")
    args = parser.parse_args(argv)
    region = args.region.upper()
    settings = load_settings(os.environ.get("SHOP_SETTINGS", "shop.toml"))
    connection = connect(settings["database"], timeout=settings.get("timeout", 5))
    orders = connection.fetch_orders(since=settings["since"], region=region)
    if not orders:
        print(f"no orders for {region}", file=sys.stderr)
        return 1
"""
    + BLOCK
    + """    with open_output(args.output) as out:
        writer = csv.writer(out)
        writer.writerow(["customer", "amount"])
        for customer, amount in ranked[: args.limit]:
            writer.writerow([customer, f"{amount:.2f}"])
    if skipped:
        log.warning("%d orders were not shipped yet", skipped)
    connection.close()
    return 0
"""
)

NIGHTLY_MAIN = (
    """def main():
    started = time.monotonic()
    queue = WorkQueue(os.environ["QUEUE_URL"], prefetch=4)
    region = queue.claim_region(worker=socket.gethostname())
    metrics = Metrics(prefix="nightly")
    orders = []
    for batch in queue.batches(region, size=500):
        metrics.count("batches")
        orders.extend(decode(message) for message in batch)
    if len(orders) < MIN_ORDERS:
        queue.release(region)
        return
"""
    + BLOCK
    + """    summary = {"region": region, "top": ranked[:25], "skipped": skipped}
    queue.publish("summaries", json.dumps(summary))
    metrics.gauge("customers", len(totals))
    metrics.timing("elapsed", time.monotonic() - started)
    queue.release(region)
"""
)

EXPORT = module("import argparse\nimport csv\nimport os\nimport sys\n", EXPORT_MAIN, UNRELATED[2])
NIGHTLY = module("import json\nimport os\nimport socket\nimport time\n", UNRELATED[1], NIGHTLY_MAIN)
FIRST_BLOCK_LINE = BLOCK.splitlines()[0]


def test_a_block_copied_into_two_long_functions_is_reported_as_lines_of_each(
    tmp_path: pathlib.Path,
) -> None:
    files = {"cli/export.py": EXPORT, "jobs/nightly.py": NIGHTLY}
    (finding,) = find_all(tmp_path / "repo", files)
    at_export = first_line_of(EXPORT, FIRST_BLOCK_LINE)
    at_nightly = first_line_of(NIGHTLY, FIRST_BLOCK_LINE)
    assert spans(finding) == [
        ("cli/export.py", at_export, at_export + BLOCK_LINES - 1),
        ("jobs/nightly.py", at_nightly, at_nightly + BLOCK_LINES - 1),
    ]
    assert finding.type == EXACT
    for loc in finding.locations:
        assert loc.kind == LINES and (loc.unit_kind, loc.unit_name) == ("function", "main")
        assert loc.describe() == f"lines {loc.first_line}-{loc.last_line} of function main"
        assert loc.unit_first < loc.first_line and loc.last_line < loc.unit_last


def test_a_renamed_block_in_two_long_functions_is_found_too(tmp_path: pathlib.Path) -> None:
    nightly = NIGHTLY.replace(BLOCK, renamed(BLOCK))
    (finding,) = find_all(tmp_path / "repo", {"cli/export.py": EXPORT, "jobs/nightly.py": nightly})
    at_nightly = first_line_of(nightly, renamed(BLOCK).splitlines()[0])
    assert ("jobs/nightly.py", at_nightly, at_nightly + BLOCK_LINES - 1) in spans(finding)
    assert all(loc.kind == LINES for loc in finding.locations)


# --- (c) a function extended after copying ---------------------------------------------------

EXTRA = """    if report:
        widest = max(len(line) for line in report)
        report.insert(0, "-" * widest)
        report.append("-" * widest)
    if totals:
        average = sum(totals.values()) / len(totals)
        report.append(f"average {average:.2f} over {len(totals)} customers")
    if skipped > limit:
        report.append("many orders skipped: check the export filters")
    log.info("summarized %d customers of %s", len(totals), region)
"""
HEAD, RETURN = ORIGINAL.rsplit("    return", 1)
EXTENDED = HEAD + EXTRA + "    return" + RETURN


@pytest.mark.parametrize("copy", [EXTENDED, renamed(EXTENDED)], ids=["exact", "renamed"])
def test_a_function_extended_after_copying_is_found(tmp_path: pathlib.Path, copy: str) -> None:
    extended = module(UNRELATED[1], copy)
    files = {"a/orders.py": module(ORIGINAL, UNRELATED[0]), "b/extended.py": extended}
    (finding,) = find_all(tmp_path / "repo", files)
    by_path = {loc.path: loc for loc in finding.locations}
    original, copied = by_path["a/orders.py"], by_path["b/extended.py"]
    assert (original.kind, original.first_line, original.last_line) == ("function", 1, N)
    start = module(UNRELATED[1]).count("\n") + 3
    # the copy's range starts at its header -- or, renamed, after the renamed header and
    # docstring, which no longer correspond -- and covers every line taken from the original
    # before the added ones (the return after them may or may not be part of it)
    assert start <= copied.first_line <= start + 2
    if copy == EXTENDED:
        assert copied.first_line == start
    assert start + N - 2 <= copied.last_line <= start + N - 1 + EXTRA.count("\n")
    assert finding.score >= 0.6


# --- (d) identical files ---------------------------------------------------------------------


def test_identical_files_are_one_finding_of_kind_file(tmp_path: pathlib.Path) -> None:
    content = module("import os\n", ORIGINAL, UNRELATED[0])
    files = {"a/util.py": content, "b/util.py": content, "c/other.py": module(UNRELATED[1])}
    (finding,) = find_all(tmp_path / "repo", files)
    lines = content.count("\n")
    assert spans(finding) == [("a/util.py", 1, lines), ("b/util.py", 1, lines)]
    assert {loc.kind for loc in finding.locations} == {"file"}
    assert finding.type == EXACT and finding.score == 1.0


def test_three_identical_files_are_one_finding(tmp_path: pathlib.Path) -> None:
    content = module(ORIGINAL, UNRELATED[0])
    files = {f"v{i}/util.py": content for i in range(3)}
    (finding,) = find_all(tmp_path / "repo", files)
    assert [loc.path for loc in finding.locations] == sorted(files)
    assert {loc.kind for loc in finding.locations} == {"file"}
    assert len(finding.pairs) == 2


# --- (e) what only normalization makes alike -------------------------------------------------

COLORS = "RED GREEN BLUE CYAN MAGENTA YELLOW BLACK WHITE ORANGE PURPLE BROWN GREY PINK GOLD".split()
STATES = (
    "DRAFT OPEN REVIEW APPROVED MERGED CLOSED REOPENED STALE LOCKED ARCHIVED DELETED SPAM".split()
)
STATES += ["PENDING", "QUEUED"]
COLOR_ENUM = "class Color(enum.Enum):\n" + "".join(
    f"    {name} = {i + 1}\n" for i, name in enumerate(COLORS)
)
STATE_ENUM = "class State(enum.Enum):\n" + "".join(
    f"    {name} = {10 * i + 3}\n" for i, name in enumerate(STATES)
)
COLOR_CONSTANTS = "".join(f"MAX_{name} = {i * 17 + 5}\n" for i, name in enumerate(COLORS))
STATE_CONSTANTS = "".join(f"LIMIT_{name} = {i * 3 + 100}\n" for i, name in enumerate(STATES))


@pytest.mark.parametrize("report_data", [False, True], ids=["default", "report-data"])
@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param(COLOR_ENUM, STATE_ENUM, id="enums"),
        pytest.param(COLOR_CONSTANTS, STATE_CONSTANTS, id="constants"),
    ],
)
def test_different_tables_of_constants_are_not_copies(
    tmp_path: pathlib.Path, first: str, second: str, report_data: bool
) -> None:
    files = {
        "a/colors.py": module("import enum\n", first, UNRELATED[0]),
        "b/states.py": module("import enum\n", second, UNRELATED[1]),
    }
    assert find_all(tmp_path / "repo", files, report_data=report_data) == []


MERGE = """def merge_totals(left, right, scale):
    result = {}
    missing = []
    for key in left:
        value = left[key] * scale
        if key in right:
            value = value + right[key]
        else:
            missing.append(key)
        result[key] = round(value, 2)
    for key in right:
        if key not in result:
            result[key] = right[key] * scale - 1
    if len(missing) > 10:
        log.warning("many keys missing: %s", missing[:10])
    return result, missing
"""
# the same shape token for token (the same normalized view), but names that follow no renaming
# of the first one's, and other literals
CLIP = """def clip_ranges(low, high, limit):
    bounds = {}
    width = []
    for start in high:
        low = bounds[width] * start
        if limit in start:
            high = width + low[limit]
        else:
            start.append(bounds)
        limit[width] = round(high, 8)
    for bounds in width:
        if start not in limit:
            low[high] = bounds[start] * width - 4
    if len(limit) > 3:
        log.warning("no ranges left: %r", high[:7])
    return width, start
"""


def run_finder(
    root: pathlib.Path, files: Mapping[str, str], **settings: object
) -> tuple[list[Finding], list[list[float]]]:
    """The findings of a tree, and the scores of every pair the finder decided."""
    write_tree(root, files)
    with Store(str(root.parent / "cache")) as store:
        index = RepoIndex(str(root), ScanConfig(**settings), store, jobs=1)  # type: ignore[arg-type]
        index.refresh(sorted(files))
        finder = CloneFinder(index)
        findings = [f for r in finder.find().values() for f in r.findings]
        return findings, list(finder.similarity("python").cache.values())


def test_same_shape_with_inconsistent_names_and_other_literals_is_not_a_copy(
    tmp_path: pathlib.Path,
) -> None:
    files = {"a/merge.py": module(MERGE, UNRELATED[0]), "b/clip.py": module(UNRELATED[1], CLIP)}
    findings, scores = run_finder(tmp_path / "repo", files)
    assert findings == []
    # the pair was decided: alike once normalized, but neither the raw tokens nor a consistent
    # renaming make it a copy
    (decided,) = scores
    normalized_ab, normalized_ba, raw_ab, raw_ba, renaming = decided
    assert min(normalized_ab, normalized_ba) == pytest.approx(1.0)
    assert 0.0 <= min(raw_ab, raw_ba) < RAW_MIN
    assert 0.0 <= renaming < RENAMING_MIN


def test_the_same_shape_consistently_renamed_is_a_copy(tmp_path: pathlib.Path) -> None:
    consistent = MERGE.replace("merge_totals", "combine_sums").replace("missing", "absent")
    files = {
        "a/merge.py": module(MERGE, UNRELATED[0]),
        "b/sums.py": module(UNRELATED[1], consistent),
    }
    (finding,) = find_all(tmp_path / "repo", files)
    assert finding.type == RENAMED


# --- (f) overload stubs ----------------------------------------------------------------------

STUBS = """@typing.overload
def fetch_rows(query: str, *, limit: int = ..., timeout: float | None = ...) -> list[Row]: ...
@typing.overload
def fetch_rows(query: Query, *, limit: int = ..., timeout: float | None = ...) -> list[Row]: ...
@typing.overload
def fetch_rows(query: bytes, *, limit: int = ..., timeout: float | None = ...) -> list[Row]: ...
@typing.overload
def fetch_rows(query: None, *, limit: int = ..., timeout: float | None = ...) -> list[Row]: ...
"""
SYNC_FETCH = """def fetch_rows(query, *, limit=100, timeout=None):
    if query is None:
        return []
    if isinstance(query, bytes):
        query = query.decode("utf-8")
    cursor = connection().cursor()
    cursor.execute(str(query), timeout=timeout)
    return [Row(*values) for values in cursor.fetchmany(limit)]
"""
POOLED_FETCH = """def fetch_rows(query, *, limit=100, timeout=None):
    started = time.monotonic()
    rows = pool.submit(query, timeout).result()
    metrics.observe("fetch", time.monotonic() - started)
    return rows[:limit]
"""


@pytest.mark.parametrize("spelling", ["typing.overload", "overload"])
def test_overload_stubs_of_one_function_in_two_files_are_not_copies(
    tmp_path: pathlib.Path, spelling: str
) -> None:
    stubs = STUBS.replace("typing.overload", spelling)
    files = {
        "db/sync.py": module("import typing\n", stubs, SYNC_FETCH, UNRELATED[0]),
        "db/pooled.py": module("import typing\n", UNRELATED[1], stubs, POOLED_FETCH),
    }
    result = find_results(tmp_path / "repo", files)["python"]
    assert result.findings == []
    assert result.filtered.get("overload", 0) + result.filtered.get("convention", 0) >= 1


# --- (g) a shared parametrize table ----------------------------------------------------------

TABLE = """@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("1", 1),
        ("-1", -1),
        ("+7", 7),
        ("  42  ", 42),
        ("1_000", 1000),
        ("0x1f", 31),
        ("0o17", 15),
        ("0b101", 5),
        ("1e3", 1000),
        ("12345678901234567890", 12345678901234567890),
        ("007", 7),
    ],
)
"""
TEST_PARSE = (
    TABLE
    + """def test_parse_int(text, expected):
    assert parse_int(text) == expected
    assert parse_int(text.encode()) == expected
"""
)
TEST_NUMBER = (
    TABLE
    + """def test_format_roundtrip(text, expected):
    value = Number.parse(text)
    assert value.as_int() == expected
    assert Number.parse(value.format()).as_int() == expected
"""
)


def test_a_parametrize_table_shared_by_two_test_files_is_not_a_copy(
    tmp_path: pathlib.Path,
) -> None:
    files = {
        "tests/test_parse.py": module("import pytest\n", TEST_PARSE),
        "tests/test_number.py": module(
            "import pytest\n\nfrom numbers_lib import Number\n", TEST_NUMBER
        ),
    }
    result = find_results(tmp_path / "repo", files)["python"]
    assert result.findings == []
    assert sum(result.filtered.values()) >= 1  # left out on purpose, and counted


# --- (h) crystal: ignore ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "copy", [ORIGINAL, renamed(), near_copy()], ids=["exact", "renamed", "near"]
)
@pytest.mark.parametrize("marked", ["original", "copy"])
def test_crystal_ignore_above_a_function_suppresses_its_copy(
    tmp_path: pathlib.Path, copy: str, marked: str
) -> None:
    ignore = "# crystal: ignore\n"
    files = {
        "a.py": module((ignore if marked == "original" else "") + ORIGINAL, UNRELATED[0]),
        "b.py": module(UNRELATED[1], (ignore if marked == "copy" else "") + copy),
    }
    result = find_results(tmp_path / "repo", files)["python"]
    assert result.findings == []
    assert result.filtered.get("suppressed") == 1


def test_crystal_ignore_leaves_the_other_copies_of_a_function(tmp_path: pathlib.Path) -> None:
    files = {
        "a.py": module(ORIGINAL),
        "b.py": module("# crystal: ignore\n" + renamed()),
        "c.py": module(UNRELATED[0], near_copy()),
    }
    result = find_results(tmp_path / "repo", files)["python"]
    (finding,) = result.findings
    assert sorted(loc.path for loc in finding.locations) == ["a.py", "c.py"]
    assert result.filtered.get("suppressed", 0) >= 1

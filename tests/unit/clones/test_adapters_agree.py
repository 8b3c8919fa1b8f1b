"""Every adapter of the clone finder reports the same copies of one file.

One repository, in which a commit adds code to ``reports/weekly.py``: a renamed copy of a
function that has a near copy elsewhere (a class of three), a block copied from another file
into a long function, and a function copied within the file; other copies elsewhere do not touch
it. The copies touching that file must be the same -- same locations, same representative, same
similarities -- whether they come from

* a full scan (:func:`crystal_lsp.clones.scan.run_scan`),
* a scan focused on the added lines, as the pre-commit hook runs it, and the hook itself
  (:func:`crystal_lsp_hooks.clone_check.check_clones` on the staged change),
* the language server's finder (:func:`crystal_lsp.server.workspace.buffer_finder`), on the
  file as indexed and on the file's content as an unsaved buffer (an override indexed under
  ``"\\0" + path``, shadowing an older version on disk),
* the MCP server's answer for the file (:meth:`crystal_lsp.mcp.workspace.Workspace.file_findings`),
* the engine scan (:func:`crystal_lsp.distributed.scan.run_scan_on_engine`): the local engine,
  which ships pairs in chunks to worker processes, and a Dask cluster when Dask is installed.

The level and evidence of each finding agree too.
"""

from __future__ import annotations

import importlib.util
import pathlib
from collections.abc import Iterable

import pytest
from crystal_lsp_hooks import clone_check  # type: ignore[import-not-found]
from scan_samples import ORIGINAL, UNRELATED, git, git_init, module, near_copy, renamed, write_tree

from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.findings import Finding
from crystal_lsp.clones.index import FileState, RepoIndex
from crystal_lsp.clones.scan import run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.distributed import scan as engine_scan
from crystal_lsp.server.workspace import buffer_finder
from crystal_lsp.text.fingerprints import content_sha
from crystal_lsp.text.incremental import IncrementalEntry

FOCUS = "reports/weekly.py"

FRESH = '''def normalize_address(record):
    """One postal address per line, upper-case country code, no empty parts."""
    parts = [record.street, record.city, record.postcode]
    cleaned = [part.strip() for part in parts if part and part.strip()]
    country = (record.country or "").strip().upper()
    if len(country) != 2:
        raise ValueError(f"bad country code {record.country!r} for {record.name}")
    cleaned.append(country)
    if record.care_of:
        cleaned.insert(0, f"c/o {record.care_of.strip()}")
    return "\\n".join(cleaned)
'''
FRESH_RENAMES = {"normalize_address": "format_label", "record": "entry", "parts": "fields"}


def fresh_copy() -> str:
    out = FRESH
    for old, new in FRESH_RENAMES.items():
        out = out.replace(old, new)
    return out


BLOCK = """    delay = backoff
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
"""
LONG = (
    '''def publish_weekly(client, week, attempts=3, backoff=1.0):
    """Render the weekly report and upload it, retrying the upload."""
    orders = load_orders(week.start, week.end)
    rows = [format_row(order) for order in orders if order.total > 0]
    body = render_template("weekly.html", rows=rows, week=week.number)
    url = f"{settings.REPORTS_URL}/{week.year}/{week.number:02d}"
    client.headers["X-Report"] = f"weekly-{week.number}"
'''
    + BLOCK
    + """    archive.store(week, body, failed=True)
    notify(settings.OPS_CHANNEL, f"weekly report {week.number} not published")
    return None
"""
)

OLD_FOCUS = module("import log\n", UNRELATED[2])
NEW_FOCUS = module("import log\n", UNRELATED[2], renamed(), LONG, FRESH, fresh_copy())

FILES = {
    "shop/orders.py": module(ORIGINAL, UNRELATED[0]),
    "billing/invoices.py": module(UNRELATED[1], near_copy()),
    "legacy/settings.py": module(UNRELATED[0].replace("parse_settings", "read_config")),
    "pyproject.toml": "[tool.crystal-lsp]\n",
}

Where = tuple[str, int, int]
Key = tuple[tuple[Where, ...], tuple[float, ...], Where, str, tuple[str, ...]]


def keys(findings: Iterable[Finding], path: str = FOCUS) -> list[Key]:
    """The findings touching ``path``: their locations, similarities and representative.

    Buffer keys (``"\\0" + path``) are shown as their paths, as the server presents them.
    """
    out: list[Key] = []
    for finding in findings:
        where = [
            (loc.path.lstrip("\0"), loc.first_line, loc.last_line) for loc in finding.locations
        ]
        if not any(p == path for p, _, _ in where):
            continue
        similarities = tuple(sorted(p.similarity for p in finding.pairs))
        rep = where[finding.representative]
        out.append(
            (tuple(sorted(where)), similarities, rep, finding.level, tuple(finding.evidence))
        )
    return sorted(out)


def copies(found: list[Key]) -> list[tuple[tuple[Where, ...], tuple[float, ...]]]:
    """The keys without the representatives: what was found, and how similar."""
    return [(where, similarities) for where, similarities, *_ in found]


def added_lines() -> list[tuple[int, int]]:
    """The lines the commit adds to the focus file (the old version is a prefix of the new)."""
    old = OLD_FOCUS.count("\n")
    return [(old + 1, NEW_FOCUS.count("\n"))]


@pytest.fixture
def repo(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The repository: the old focus file committed, the new one staged."""
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "PRE_COMMIT"):
        monkeypatch.delenv(name, raising=False)
    root = write_tree(tmp_path / "repo", {**FILES, FOCUS: OLD_FOCUS})
    git_init(root)
    write_tree(root, {FOCUS: NEW_FOCUS})
    git(root, "add", FOCUS)
    return root


def use_fresh_cache(monkeypatch: pytest.MonkeyPatch, path: pathlib.Path) -> None:
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(path))


CONFIG = ScanConfig()


def full_scan(root: pathlib.Path) -> list[Key]:
    paths = list_files(str(root), CONFIG)
    return keys(run_scan(str(root), paths, CONFIG, use_cache=False, jobs=1).findings)


def test_the_reference_has_every_kind_of_copy(
    repo: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert BLOCK in UNRELATED[1]  # the block is copied from billing/invoices.py
    use_fresh_cache(monkeypatch, tmp_path / "cache-full")
    found = full_scan(repo)
    by_files = sorted(tuple(p for p, _, _ in locations) for locations, *_ in found)
    assert by_files == [
        ("billing/invoices.py", FOCUS),  # the block
        ("billing/invoices.py", FOCUS, "shop/orders.py"),  # the class of three
        (FOCUS, FOCUS),  # the copy within the file
    ]
    block = next(where for where, *_ in found if len(where) == 2 and where[0][0] != FOCUS)
    assert {level for *_, level, _ in found} == {"copy"}  # what the hook and MCP answer too
    # the block's lines, or the whole function it is most of (signature included; issue 31)
    lengths = [last - first + 1 for _, first, last in block]
    assert BLOCK.count("\n") in lengths and max(lengths) <= BLOCK.count("\n") + 3
    # the copy between the other two files is found, but does not touch the focus file
    everything = run_scan(str(repo), list_files(str(repo), CONFIG), CONFIG, jobs=1).findings
    assert len(everything) == len(found) + 1


def test_focused_scan_as_the_hook_runs_it(
    repo: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fresh_cache(monkeypatch, tmp_path / "cache-full")
    reference = full_scan(repo)
    use_fresh_cache(monkeypatch, tmp_path / "cache-focus")
    paths = list_files(str(repo), CONFIG)
    focused = run_scan(
        str(repo), paths, CONFIG, focus_lines={FOCUS: added_lines()}, use_cache=False, jobs=1
    )
    assert keys(focused.findings) == reference
    assert all(FOCUS in {loc.path for loc in f.locations} for f in focused.findings)


def test_the_pre_commit_hook(
    repo: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fresh_cache(monkeypatch, tmp_path / "cache-full")
    reference = full_scan(repo)
    use_fresh_cache(monkeypatch, tmp_path / "cache-hook")
    monkeypatch.chdir(repo)
    root, git_dir = clone_check.repo_paths(str(repo))
    outcome = clone_check.check_clones(root, git_dir, CONFIG, clone_check.Request())
    assert outcome.files == 1 and len(outcome.additions) == len(reference)
    assert keys(addition.finding for addition in outcome.additions) == reference
    for addition in outcome.additions:
        assert addition.location.path == FOCUS  # reported at the new code


def test_the_language_server_finder(
    repo: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fresh_cache(monkeypatch, tmp_path / "cache-full")
    reference = full_scan(repo)
    paths = list_files(str(repo), CONFIG)
    with Store(str(tmp_path / "server-cache")) as store:
        index = RepoIndex(str(repo), CONFIG, store, jobs=1)
        index.refresh(paths)
        found = buffer_finder(index).find({FOCUS: None})
    assert keys(found["python"].findings) == reference


def unsaved_buffer(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Key], list[Finding]]:
    """The full scan of the new version saved, and the server's findings of it unsaved."""
    saved = write_tree(tmp_path / "saved", {**FILES, FOCUS: NEW_FOCUS})
    use_fresh_cache(monkeypatch, tmp_path / "cache-full")
    reference = full_scan(saved)
    # the server: the old version on disk, the new one in the editor (Folder.check's injection)
    root = write_tree(tmp_path / "editing", {**FILES, FOCUS: OLD_FOCUS})
    paths = list_files(str(root), CONFIG)
    key = "\0" + FOCUS
    with Store(str(tmp_path / "server-cache")) as store:
        index = RepoIndex(str(root), CONFIG, store, jobs=1)
        index.refresh(paths)
        buffer = IncrementalEntry(
            FOCUS, NEW_FOCUS, "python", min_tokens=CONFIG.min_tokens, min_lines=CONFIG.min_lines
        )
        sha = content_sha(NEW_FOCUS.encode("utf-8"))
        index.files[key] = FileState(key, sha, buffer.entry, True)
        found = buffer_finder(index).find({key: None})["python"].findings
    return reference, found


def test_the_language_server_finder_on_an_unsaved_buffer(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference, found = unsaved_buffer(tmp_path, monkeypatch)
    # the file on disk is the buffer's old self: it takes no part
    assert all(loc.path != FOCUS for f in found for loc in f.locations)
    assert all(any(loc.path == "\0" + FOCUS for loc in f.locations) for f in found)
    assert copies(keys(found)) == copies(reference)


def test_an_unsaved_buffer_keeps_the_representatives_of_the_saved_file(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference, found = unsaved_buffer(tmp_path, monkeypatch)
    assert keys(found) == reference


def test_the_mcp_server(
    repo: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from crystal_lsp.mcp.workspace import Workspace

    use_fresh_cache(monkeypatch, tmp_path / "cache-full")
    reference = full_scan(repo)
    use_fresh_cache(monkeypatch, tmp_path / "cache-mcp")
    ws = Workspace(str(repo), jobs=1)
    try:
        ws.start().result(timeout=120)
        found = ws.submit(ws.file_findings, FOCUS).result()
    finally:
        ws.close()
    assert keys(found) == reference


@pytest.mark.parametrize(
    "engine",
    [
        "local",
        pytest.param(
            "dask",
            marks=pytest.mark.skipif(
                importlib.util.find_spec("distributed") is None, reason="dask is not installed"
            ),
        ),
    ],
)
def test_the_engine_scan(
    repo: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    use_fresh_cache(monkeypatch, tmp_path / "cache-full")
    reference = full_scan(repo)
    use_fresh_cache(monkeypatch, tmp_path / f"cache-{engine}")
    monkeypatch.setattr(engine_scan, "CHUNK_PAIRS", 2)  # several chunks of pairs to score
    monkeypatch.setattr(engine_scan, "CHUNK_JOBS", 2)
    paths = list_files(str(repo), CONFIG)
    result = engine_scan.run_scan_on_engine(
        str(repo), paths, CONFIG, engine=engine, jobs=2, use_cache=False
    )
    assert result.scored > 2
    assert keys(result.findings) == reference
    focused = engine_scan.run_scan_on_engine(
        str(repo),
        paths,
        CONFIG,
        engine=engine,
        jobs=2,
        use_cache=False,
        focus_lines={FOCUS: added_lines()},
    )
    assert keys(focused.findings) == reference

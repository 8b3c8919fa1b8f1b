"""``crystal-lsp scan`` through ``main(argv)``: exit codes, formats, options, --demo, cache damage."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
from typing import Any

import jsonschema
import pytest
from scan_samples import (
    ALL_LIST,
    IMPORTS,
    ORIGINAL,
    UNRELATED,
    filler,
    git,
    git_init,
    module,
    near_copy,
    renamed,
    write_tree,
)

import crystal_lsp
from crystal_lsp.cli.main import main
from crystal_lsp.clones.findings import RANKING
from crystal_lsp.clones.store import repo_cache_dir

SCHEMA = json.loads(
    (pathlib.Path(__file__).parents[2] / "data" / "scan" / "findings.schema.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert err == ""
    doc = json.loads(out)
    assert [f"{e.json_path}: {e.message}" for e in VALIDATOR.iter_errors(doc)] == []
    return code, doc


def ids(doc: dict[str, Any]) -> list[tuple[str, float]]:
    return [(f["id"], f["score"]) for f in doc["findings"]]


@pytest.fixture
def repo(tmp_path: pathlib.Path) -> pathlib.Path:
    return write_tree(
        tmp_path / "repo",
        {
            "shop/orders.py": module(IMPORTS, ALL_LIST, ORIGINAL, UNRELATED[0]),
            "shop/invoices.py": module(IMPORTS, ALL_LIST, renamed(), UNRELATED[1]),
            "shop/near.py": module(IMPORTS, near_copy(), UNRELATED[2]),
            "README.md": "# shop\n",
            "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
        },
    )


@pytest.fixture
def clean(tmp_path: pathlib.Path) -> pathlib.Path:
    return write_tree(tmp_path / "clean", {"a.py": module(ORIGINAL), "b.py": module(UNRELATED[0])})


# --- exit codes ------------------------------------------------------------------------------


def test_exit_0_when_clean(clean: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["scan", str(clean)], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("crystal-lsp: 0 copies worth a look (0 locations) in 2 files\n")
    assert "threshold 0.6, signature " in out


def test_exit_1_with_findings(repo: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["scan", str(repo)], capsys)
    assert code == 1 and len(doc["findings"]) == 1


def test_default_path_is_the_current_directory(
    repo: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    code, doc = run_json(["scan"], capsys)
    assert code == 1 and doc["root"] == str(repo)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["{missing}"], "not a directory", id="missing-path"),
        pytest.param(["{file}"], "not a directory", id="file-path"),
        pytest.param(
            ["{repo}", "--threshold", "1.5"], "threshold must be in (0, 1]", id="threshold"
        ),
        pytest.param(
            ["{repo}", "--threshold", "0"], "threshold must be in (0, 1]", id="threshold-0"
        ),
        pytest.param(["{repo}", "-k", "lots"], "bad value for 'k'", id="k"),
        pytest.param(["{repo}", "-k", "-3"], "k must be at least 0", id="k-negative"),
        pytest.param(["{repo}", "--min-tokens", "0"], "at least 1", id="min-tokens"),
        pytest.param(["{repo}", "--min-lines", "-1"], "at least 1", id="min-lines"),
        pytest.param(
            ["{repo}", "--update-baseline"], "--update-baseline needs --baseline", id="ub"
        ),
        pytest.param(["--demo", "{repo}"], "--demo takes no path", id="demo-with-path"),
        pytest.param(["{repo}", "--baseline", "{missing}"], "no such baseline file", id="baseline"),
    ],
)
def test_usage_errors_exit_2(
    argv: list[str],
    message: str,
    repo: pathlib.Path,
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "file.txt").write_text("x")
    names = {"repo": repo, "missing": tmp_path / "missing", "file": tmp_path / "file.txt"}
    code, out, err = run(["scan", *(a.format(**names) for a in argv)], capsys)
    assert code == 2 and out == ""
    assert err.startswith("crystal-lsp: error: ") and message in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--threshold", "high"], id="threshold-word"),
        pytest.param(["--format", "xml"], id="format"),
        pytest.param(["--min-tokens", "many"], id="min-tokens-word"),
        pytest.param(["--jobs", "two"], id="jobs"),
        pytest.param(["--no-such-option"], id="unknown-option"),
    ],
)
def test_argparse_errors_exit_2(
    argv: list[str], repo: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["scan", str(repo), *argv])
    assert caught.value.code == 2
    assert "usage: crystal-lsp" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("pyproject", "message"),
    [
        pytest.param(
            "[tool.crystal-lsp]\nthresold = 0.5\n", "unknown setting 'thresold'", id="key"
        ),
        pytest.param("[tool.crystal-lsp]\nk = 'x'\n", "bad value for 'k'", id="value"),
        pytest.param("[tool.crystal-lsp\n", "cannot read", id="toml"),
        pytest.param("[tool]\ncrystal-lsp = 1\n", "must be a table", id="not-a-table"),
    ],
)
def test_malformed_pyproject_exit_2(
    pyproject: str, message: str, repo: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "pyproject.toml").write_text(pyproject)
    code, out, err = run(["scan", str(repo)], capsys)
    assert code == 2 and out == "" and message in err and "pyproject.toml" in err


def test_unknown_new_since_ref_exit_2(
    repo: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git_init(repo)
    code, out, err = run(["scan", str(repo), "--new-since", "no-such-ref"], capsys)
    assert code == 2 and out == ""
    assert err == "crystal-lsp: error: --new-since: unknown git revision 'no-such-ref'\n"


def test_new_since_outside_git_exit_2(
    repo: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["scan", str(repo), "--new-since", "HEAD"], capsys)
    assert code == 2 and "needs a git repository" in err


def test_unknown_language_exit_2(repo: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["scan", str(repo), "--lang", "pythn"], capsys)
    assert code == 2 and "language" in err


def test_language_aliases_are_canonical(
    repo: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alias = run(["scan", str(repo), "--lang", "py", "--format", "json", "--no-cache"], capsys)
    name = run(["scan", str(repo), "--lang", "Python", "--format", "json", "--no-cache"], capsys)
    assert alias[0] == name[0] == 1
    assert json.loads(alias[1])["findings"] == json.loads(name[1])["findings"]


def test_internal_error_exit_3(
    repo: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom in the clone finder")

    monkeypatch.setattr("crystal_lsp.clones.finder.CloneFinder.find", broken)
    code, out, err = run(["scan", str(repo), "--no-cache"], capsys)
    assert code == 3 and out == ""
    lines = err.splitlines()
    assert lines[0] == (
        f"crystal-lsp: internal error (crystal-lsp {crystal_lsp.__version__}), not a finding; "
        "please report it with this trace:"
    )
    assert lines[1] == "Traceback (most recent call last):"
    assert lines[-1] == "RuntimeError: boom in the clone finder"


# --- the demo --------------------------------------------------------------------------------


def test_demo_finds_the_four_planted_copies(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["scan", "--demo"], capsys)
    assert code == 1

    def named(loc: dict[str, Any]) -> str:
        return str(loc["name"] or loc.get("unit", {}).get("name", ""))

    found = sorted(
        (f["language"], tuple(sorted((loc["path"], named(loc)) for loc in f["locations"])))
        for f in doc["findings"]
    )
    # the classes differ in their last method: what was copied is the lines before it
    assert found == [
        ("java", (("inventory/Store.java", "Store"), ("inventory/Warehouse.java", "Warehouse"))),
        ("javascript", (("web/cart.js", "cartTotal"), ("web/checkout.js", "orderTotal"))),
        (
            "python",
            (("billing/invoices.py", "invoice_total"), ("inventory/stock.py", "stock_value")),
        ),
        (
            "python",
            (("billing/invoices.py", "overdue_invoices"), ("inventory/stock.py", "late_shipments")),
        ),
    ]
    names = {named(loc) for f in doc["findings"] for loc in f["locations"]}
    assert not names & {"reorder_list", "totalUnits", "formatPrice", "receipt", "describe"}
    java = next(f for f in doc["findings"] if f["language"] == "java")
    assert {loc["kind"] for loc in java["locations"]} == {"lines"}
    assert all(loc["end"]["line"] < 24 for loc in java["locations"])
    assert doc["skipped"] == [{"path": "README.md", "reason": "not code (markdown)"}]
    assert doc["summary"]["files"] == 6 and set(doc["ssets"]) == {"java", "javascript", "python"}


# --- formats and options ---------------------------------------------------------------------


def test_json_report(repo: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["scan", str(repo)], capsys)
    assert code == 1
    assert doc["version"] == 3 and doc["tool"]["version"] == crystal_lsp.__version__
    assert doc["root"] == str(repo)
    (finding,) = doc["findings"]
    assert finding["type"] == "near" and finding["language"] == "python"
    assert sorted(loc["path"] for loc in finding["locations"]) == [
        "shop/invoices.py",
        "shop/near.py",
        "shop/orders.py",
    ]
    assert finding["representative"] == 0
    assert [(p["a"], p["b"]) for p in finding["pairs"]] == [(0, 1), (0, 2)]
    assert finding["copied"] == sum(p["copied"] for p in finding["pairs"]) > 0
    assert "shared_ngrams" not in finding
    assert doc["summary"] == {
        "files": 3,
        "snippets": 6,
        "findings": 1,
        "copies": 1,
        "similar": 0,
        "skipped": 2,
        "candidates": doc["summary"]["candidates"],
        "scored": doc["summary"]["scored"],
        "cached": False,
        "baselined": 0,
        "filtered": doc["summary"]["filtered"],
        "ranking": RANKING,
    }
    assert finding["level"] == "copy" and finding["family"] is False
    assert any("code lines identical" in e for e in finding["evidence"])
    assert 0.0 <= finding["probability"] <= 1.0
    facts = finding["facts"]  # the best pair's checkable evidence
    assert [facts["pair"][0], facts["pair"][1]] in [[p["a"], p["b"]] for p in finding["pairs"]]
    assert facts["identical"] <= max(facts["code_lines"])
    assert finding["weight"] == max(p["copied"] * p["crystalbleu"] for p in finding["pairs"])
    assert doc["skipped"] == [
        {"path": "README.md", "reason": "not code (markdown)"},
        {"path": "assets/logo.png", "reason": "binary file"},
    ]


def test_warm_rerun_is_cached_and_identical(
    repo: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, cold = run_json(["scan", str(repo)], capsys)
    code, warm = run_json(["scan", str(repo)], capsys)
    assert code == 1 and warm["summary"]["cached"] is True and cold["summary"]["cached"] is False
    assert warm["findings"] == cold["findings"] and warm["skipped"] == cold["skipped"]
    _, again = run_json(["scan", str(repo), "--no-cache"], capsys)
    assert again["summary"]["cached"] is False and again["findings"] == cold["findings"]


def test_text_report(repo: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["scan", str(repo)], capsys)
    assert code == 1 and err == ""
    lines = out.splitlines()
    start = module(IMPORTS, ALL_LIST).count("\n") + 3
    near_start = module(IMPORTS).count("\n") + 3
    n = ORIGINAL.count("\n")
    rep = f"shop/invoices.py:{start}-{start + n - 1}"
    # the summary first, then the findings, the skipped files last
    assert lines[0] == "crystal-lsp: 1 copy worth a look (3 locations) in 3 files"
    assert lines[1].startswith("ranked: copies first, then similar structure")
    assert lines[2].startswith(
        "legend: p = probability that a finding's best pair is a copy worth acting on"
    )
    assert "similarity = " in lines[2] and "CrystalBLEU = " in lines[2]
    assert "signature " in out and "python S " in out
    at = lines.index("") + 1
    assert lines[at].startswith(f"[1] near copy of {rep} (function tally_invoices), python, ")
    assert re.search(r"3 locations, p [01]\.\d\d$", lines[at])
    assert "lines identical" in lines[at + 1]
    assert lines[at + 2] == f"  {rep}  function tally_invoices  (representative)"
    assert lines[at + 3].startswith(
        f"  shop/near.py:{near_start}-{near_start + n - 1}  function tally_"
    )
    assert "  similarity 0." in lines[at + 3] and "CrystalBLEU" in lines[at + 3]
    assert lines[at + 4].startswith(
        f"  shop/orders.py:{start}-{start + n - 1}  function summarize_orders  similarity 1.000"
    )
    assert out.index("[1] ") < out.index("files not indexed")
    assert "2 files not indexed: 1 not code, 1 binary file" in out
    assert "  skipped assets/logo.png: binary file" in out
    assert "skipped README.md" not in out  # not-code files only with --show-skipped
    _, out, _ = run(["scan", str(repo), "--show-skipped"], capsys)
    assert "  skipped README.md: not code (markdown)" in out


def test_show_ngrams(repo: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["scan", str(repo), "--show-ngrams"], capsys)
    assert code == 1
    (line,) = [line for line in out.splitlines() if "shared non-trivial n-grams:" in line]
    _, doc = run_json(["scan", str(repo), "--show-ngrams"], capsys)
    shared = doc["findings"][0]["shared_ngrams"]
    assert 1 <= len(shared) <= 10 and all(len(g) == 4 for g in shared)
    assert line == "    shared non-trivial n-grams: " + "  |  ".join(" ".join(g) for g in shared)
    _, plain = run_json(["scan", str(repo)], capsys)
    assert "shared_ngrams" not in plain["findings"][0]


def test_output_file(
    repo: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "report.json"
    code, out, err = run(["scan", str(repo), "--format", "json", "--output", str(target)], capsys)
    assert (code, out, err) == (1, "", "")
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert list(VALIDATOR.iter_errors(doc)) == [] and len(doc["findings"]) == 1
    text = tmp_path / "report.txt"
    assert run(["scan", str(repo), "-o", str(text)], capsys)[1] == ""
    assert text.read_text().startswith("crystal-lsp: 1 copy worth a look")
    sarif = tmp_path / "report.sarif"
    assert run(["scan", str(repo), "--format", "sarif", "-o", str(sarif)], capsys)[0] == 1
    assert json.loads(sarif.read_text())["version"] == "2.1.0"


def test_options_reach_the_settings(repo: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "scan",
        str(repo),
        "--threshold",
        "0.95",
        "-k",
        "auto",
        "--min-tokens",
        "40",
        "--min-lines",
        "4",
        "--lang",
        "python",
        "--include",
        "shop/**",
        "--exclude",
        "**/near.py",
        "--no-same-file",
        "--jobs",
        "1",
        "--no-progress",
    ]
    code, doc = run_json(argv, capsys)
    settings = doc["settings"]
    assert (
        settings["threshold"],
        settings["k"],
        settings["min_tokens"],
        settings["min_lines"],
    ) == (
        0.95,
        "auto",
        40,
        4,
    )
    assert settings["languages"] == ["python"] and settings["include"] == ["shop/**"]
    assert settings["extend_exclude"] == ["**/near.py"] and settings["same_file"] is False
    assert doc["summary"]["files"] == 2 and code == 1
    assert [loc["path"] for loc in doc["findings"][0]["locations"]] == [
        "shop/invoices.py",
        "shop/orders.py",
    ]


def test_pyproject_settings_apply(repo: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pyproject.toml").write_text('[tool.crystal-lsp]\nextend-exclude = ["shop/near.py"]\n')
    _, doc = run_json(["scan", str(repo)], capsys)
    assert doc["settings"]["extend_exclude"] == ["shop/near.py"]
    assert len(doc["findings"][0]["locations"]) == 2
    # the command line wins over pyproject.toml
    _, doc = run_json(["scan", str(repo), "--exclude", "nothing"], capsys)
    assert len(doc["findings"][0]["locations"]) == 3


def test_progress_bars_go_to_stderr(repo: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["scan", str(repo), "--progress", "--format", "json"], capsys)
    assert code == 1 and json.loads(out)["findings"]
    assert "tokenizing" in err


# --- --new-since -----------------------------------------------------------------------------


def test_new_since_reports_only_changed_code(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_tree(
        tmp_path / "hist",
        {
            "a.py": module(ORIGINAL, UNRELATED[0]),
            "b.py": module(UNRELATED[1]),
            "old1.py": module(UNRELATED[2]),
            "old2.py": module(UNRELATED[2].replace("transpose_matrix", "flip_rows")),
        },
    )
    git_init(root)
    git(root, "tag", "base")
    (root / "b.py").write_text(module(UNRELATED[1], renamed()))
    code, doc = run_json(["scan", str(root), "--new-since", "base"], capsys)
    assert code == 1
    # the new copy is compared with unchanged a.py; the old old1/old2 copies are not reported
    assert [sorted(loc["path"] for loc in f["locations"]) for f in doc["findings"]] == [
        ["a.py", "b.py"]
    ]
    _, full = run_json(["scan", str(root)], capsys)
    assert len(full["findings"]) == 2
    # untracked files count as changed, whole
    write_tree(root, {"new/c.py": module(near_copy())})
    _, doc = run_json(["scan", str(root), "--new-since", "base"], capsys)
    assert [sorted(loc["path"] for loc in f["locations"]) for f in doc["findings"]] == [
        ["a.py", "b.py", "new/c.py"]
    ]
    # no change since HEAD once committed: nothing to report, exit 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "copies")
    code, doc = run_json(["scan", str(root), "--new-since", "HEAD"], capsys)
    assert code == 0 and doc["findings"] == []


def test_new_since_from_a_subdirectory(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_tree(
        tmp_path / "hist", {"pkg/a.py": module(ORIGINAL), "pkg/b.py": module(UNRELATED[0])}
    )
    git_init(root)
    (root / "pkg/b.py").write_text(module(UNRELATED[0], renamed()))
    code, doc = run_json(["scan", str(root / "pkg"), "--new-since", "HEAD"], capsys)
    assert code == 1
    paths = [loc["path"] for loc in doc["findings"][0]["locations"]]
    assert [p.rsplit("/", 1)[-1] for p in paths] == ["a.py", "b.py"]


def test_new_since_keeps_to_the_given_directory(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_tree(
        tmp_path / "hist",
        {"pkg/a.py": module(UNRELATED[0]), "other/b.py": module(ORIGINAL), "other/c.py": "x = 1\n"},
    )
    git_init(root)
    (root / "other/c.py").write_text(module(renamed()))
    code, doc = run_json(["scan", str(root / "pkg"), "--new-since", "HEAD"], capsys)
    assert (code, doc["findings"], doc["summary"]["files"]) == (0, [], 1)


# --- cache damage ----------------------------------------------------------------------------


def _truncate_half(path: pathlib.Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _truncate_empty(path: pathlib.Path) -> None:
    path.write_bytes(b"")


def _garble_head(path: pathlib.Path) -> None:
    data = path.read_bytes()
    path.write_bytes(b"\xde\xad\xbe\xef" * 32 + data[128:])


def _garble_middle(path: pathlib.Path) -> None:
    data = path.read_bytes()
    mid = len(data) // 2
    path.write_bytes(
        data[:mid] + bytes(255 - b for b in data[mid : mid + 2048]) + data[mid + 2048 :]
    )


DAMAGE = [_truncate_half, _truncate_empty, _garble_head, _garble_middle]


@pytest.fixture(scope="module")
def damaged_repo(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("damage") / "repo"
    # big.py's index entries are larger than 32 KiB: diskcache keeps each in a file of its own
    return write_tree(
        root,
        {
            "big.py": filler(400),
            "shop/orders.py": module(IMPORTS, ORIGINAL, UNRELATED[0]),
            "shop/invoices.py": module(UNRELATED[1], renamed()),
        },
    )


def test_damaged_cache_files_give_the_same_report(
    damaged_repo: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, expected = run_json(["scan", str(damaged_repo)], capsys)
    assert code == 1 and len(expected["findings"]) == 1
    cache = pathlib.Path(repo_cache_dir(str(damaged_repo)))
    pristine = tmp_path / "pristine"
    shutil.copytree(cache, pristine)
    files = sorted(p.relative_to(pristine) for p in pristine.rglob("*") if p.is_file())
    assert pathlib.Path("cache.db") in files
    assert any(p.suffix == ".val" for p in files)
    checked = 0
    for rel in files:
        for damage in DAMAGE:
            for extra in ([], ["--no-cache"]):
                shutil.rmtree(cache)
                shutil.copytree(pristine, cache)
                damage(cache / rel)
                code, out, err = run(
                    ["scan", str(damaged_repo), "--format", "json", *extra], capsys
                )
                label = f"{rel} {damage.__name__} {extra}"
                assert code == 1, label
                assert "Traceback" not in err and "internal error" not in err, label
                assert ids(json.loads(out)) == ids(expected), label
                checked += 1
    assert checked == len(files) * len(DAMAGE) * 2
    # and the cache heals: the next scans are cached again
    run(["scan", str(damaged_repo), "--format", "json"], capsys)
    _, doc = run_json(["scan", str(damaged_repo)], capsys)
    assert doc["summary"]["cached"] is True and ids(doc) == ids(expected)


def test_deleted_cache_directory(repo: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, expected = run_json(["scan", str(repo)], capsys)
    shutil.rmtree(repo_cache_dir(str(repo)))
    code, doc = run_json(["scan", str(repo)], capsys)
    assert code == 1 and ids(doc) == ids(expected) and doc["summary"]["cached"] is False


# --- --format agent ---------------------------------------------------------------------------


def test_agent_format_is_one_line_per_copy_and_one_summary(
    repo: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = run_json(["scan", str(repo)], capsys)
    agent_code, out, err = run(["scan", str(repo), "--format", "agent"], capsys)
    assert (agent_code, err) == (code, "")
    lines = out.splitlines()
    copies = [line for line in lines if " ~ " in line]
    assert len(copies) == sum(len(f["pairs"]) for f in doc["findings"]) == len(lines) - 1
    first = doc["findings"][0]
    rep = first["locations"][first["representative"]]
    assert copies[0].startswith(f"{rep['path']}:{rep['start']['line']}-{rep['end']['line']} ~ ")
    p = f"p {first['probability']:.2f}"
    assert f"similarity {first['pairs'][0]['similarity']:.2f} {p} (" in copies[0]
    summary = lines[-1]
    shown = [f for f in doc["findings"] if f["level"] == "copy"]
    locations = sum(len(f["locations"]) for f in shown)
    assert summary.startswith(
        f"crystal: {len(shown)} cop{'y' if len(shown) == 1 else 'ies'} worth a look "
        f"({locations} locations) in "
    )
    assert f"{doc['summary']['skipped']} files not indexed" in summary
    assert "\x1b" not in out


def test_agent_format_without_copies(
    clean: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["scan", str(clean), "--format", "agent"], capsys)
    assert code == 0
    assert out == "crystal: no copies in 2 files (threshold 0.6)\n"

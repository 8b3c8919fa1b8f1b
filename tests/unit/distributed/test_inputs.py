"""Streamed corpus inputs (crystal_lsp.distributed.inputs) and `sset build` over them, locally."""

from __future__ import annotations

import gzip
import json
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from crystal_lsp.cli.main import main
from crystal_lsp.distributed import inputs
from crystal_lsp.distributed.inputs import (
    Document,
    Selection,
    iter_corpus,
    iter_documents,
    needs_streaming,
    plan,
)
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.sset import TriviallySharedSet

DATA = Path(__file__).resolve().parents[2] / "data"
CORPUS = DATA / "corpus"

FILES = {
    "pkg/a.py": "def f(x):\n    return x + 1\n",
    "pkg/b.py": "import os\nprint(os.getcwd())\n",
    "pkg/sub/c.py": "class C:\n    def m(self):\n        return [1, 2, 3]\n",
    "pkg/Main.java": "class Main { void run() { int x = 1; } }\n",
    "pkg/notes.txt": "just words\n",
    "pkg/blob.py": "\x00binary",
    "pkg/.git/config.py": "ignored = True\n",
}


def write_files(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def read_all(
    paths: list[str], selection: Selection, part_bytes: int | None = None
) -> tuple[list[Document], list[tuple[str, str]]]:
    skipped: list[tuple[str, str]] = []
    docs = [d for p in plan(paths, part_bytes) for d in iter_documents(p, selection, skipped)]
    return docs, skipped


def test_directory_documents_languages_and_skips(tmp_path: Path) -> None:
    pkg = write_files(tmp_path)
    docs, skipped = read_all([str(pkg)], Selection())
    names = [Path(d.name).relative_to(pkg).as_posix() for d in docs]
    assert names == ["Main.java", "a.py", "b.py", "sub/c.py"]  # sorted walk, .git skipped
    assert [d.language for d in docs] == ["java", "python", "python", "python"]
    assert sorted((Path(n).name, r) for n, r in skipped) == [
        ("blob.py", "binary file"),
        ("notes.txt", "unknown language"),
    ]
    python, _ = read_all([str(pkg)], Selection(language="python"))
    assert [Path(d.name).name for d in python] == ["a.py", "b.py", "c.py"]


def test_small_parts_read_the_same_documents(tmp_path: Path) -> None:
    pkg = write_files(tmp_path)
    parts = plan([str(pkg)], part_bytes=20)
    assert len(parts) > 3 and all(p.kind == inputs.FILES for p in parts)
    assert read_all([str(pkg)], Selection(), 20) == read_all([str(pkg)], Selection())


@pytest.mark.parametrize("suffix", [".zip", ".jar", ".tar", ".tar.gz", ".tgz", ".tar.xz"])
def test_archives_are_read_like_the_directory(tmp_path: Path, suffix: str) -> None:
    pkg = write_files(tmp_path)
    archive = tmp_path / f"src{suffix}"
    members = sorted(p for p in pkg.rglob("*") if p.is_file())
    if suffix in (".zip", ".jar"):
        with zipfile.ZipFile(archive, "w") as zf:
            for path in members:
                zf.write(path, path.relative_to(tmp_path).as_posix())
    else:
        mode = {".tar": "w", ".tar.gz": "w:gz", ".tgz": "w:gz", ".tar.xz": "w:xz"}[suffix]
        with tarfile.open(archive, mode) as tf:
            for path in members:
                tf.add(path, path.relative_to(tmp_path).as_posix())
    assert needs_streaming([str(archive)])
    for part_bytes in (None, 30):
        docs, skipped = read_all([str(archive)], Selection(language="python"), part_bytes)
        assert sorted(d.name.split("!/")[1] for d in docs) == [
            "pkg/a.py",
            "pkg/b.py",
            "pkg/sub/c.py",
        ]
        assert all(d.name.startswith(f"{archive}!/") for d in docs)
        direct, _ = read_all([str(pkg)], Selection(language="python"))
        assert sorted(d.text for d in docs) == sorted(d.text for d in direct)
        assert sorted(r for _, r in skipped) == ["binary file", "unknown language"]


def test_archive_member_size_limit(tmp_path: Path) -> None:
    archive = tmp_path / "big.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("big.py", "x = 1\n" * 100)
        zf.writestr("small.py", "y = 2\n")
    docs, skipped = read_all([str(archive)], Selection(max_bytes=100))
    assert [d.text for d in docs] == ["y = 2\n"]
    assert skipped == [(f"{archive}!/big.py", "too large (600 bytes > limit 100)")]


def write_dataset(path: Path, rows: list[dict[str, str]]) -> Path:
    text = "".join(json.dumps(r) + "\n" + ("\n" if i % 3 == 0 else "") for i, r in enumerate(rows))
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


ROWS = [
    {"id": f"i{i}", "class": f"c{i % 3}", "lang": "python", "code": f"x{i} = {i} * (y + {i})\n" * (i % 4 + 1), "split": "train" if i % 2 else "test"}
    for i in range(40)
]  # fmt: skip


@pytest.mark.parametrize("part_bytes", [None, 50, 333, 1000])
def test_jsonl_byte_ranges_read_every_line_once(tmp_path: Path, part_bytes: int | None) -> None:
    dataset = write_dataset(tmp_path / "d.jsonl", ROWS)
    parts = plan([str(dataset)], part_bytes)
    if part_bytes is not None:
        assert len(parts) > 1
    docs, _ = read_all([str(dataset)], Selection(), part_bytes)
    assert [d.name for d in docs] == [f"{dataset}#i{i}" for i in range(40)]
    assert [d.text for d in docs] == [r["code"] for r in ROWS]
    train, _ = read_all([str(dataset)], Selection(split="train"), part_bytes)
    assert [d.name.rsplit("#", 1)[1] for d in train] == [f"i{i}" for i in range(1, 40, 2)]


def test_glob_of_gzip_shards(tmp_path: Path) -> None:
    for shard in range(3):
        write_dataset(tmp_path / f"shard-{shard}.jsonl.gz", ROWS[shard * 10 : shard * 10 + 10])
    pattern = str(tmp_path / "shard-*.jsonl.gz")
    assert needs_streaming([pattern])
    parts = plan([pattern])
    assert [p.kind for p in parts] == [inputs.JSONL] * 3
    docs = list(iter_corpus([pattern], Selection(language="python"), []))
    assert [d.name.rsplit("#", 1)[1] for d in docs] == [f"i{i}" for i in range(30)]


def test_relative_paths_are_read_from_the_planners_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    parts = plan(["pkg"])
    monkeypatch.chdir("/")  # a worker elsewhere
    skipped: list[tuple[str, str]] = []
    docs = [d for p in parts for d in iter_documents(p, Selection(language="python"), skipped)]
    assert [d.name for d in docs] == ["pkg/a.py", "pkg/b.py", "pkg/sub/c.py"]  # as given
    assert sorted(skipped) == [
        ("pkg/blob.py", "binary file"),
        ("pkg/notes.txt", "unknown language"),
    ]


def test_bad_dataset_line_names_its_byte_offset(tmp_path: Path) -> None:
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(json.dumps(ROWS[0]) + "\n" + '{"id": 1}\n' + json.dumps(ROWS[1]) * 30 + "\n")
    with pytest.raises(CrystalError, match=r"line at byte \d+: not a dataset line"):
        read_all([str(dataset)], Selection(), 40)


@pytest.mark.parametrize(
    ("path", "message"),
    [("nope", "no such file or directory"), ("*.nothing", "no file matches this pattern")],
)
def test_missing_inputs(tmp_path: Path, path: str, message: str) -> None:
    with pytest.raises(CrystalError, match=message):
        plan([str(tmp_path / path)])


def test_bad_archive_is_a_usage_error(tmp_path: Path) -> None:
    archive = tmp_path / "broken.zip"
    archive.write_bytes(b"PK not really")
    with pytest.raises(CrystalError, match="not a readable zip archive"):
        plan([str(archive)])


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_sset_build_from_archive_equals_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "corpus.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(CORPUS, "corpus")
    built = {}
    for name, source, jobs in (("dir", CORPUS, "1"), ("tar", archive, "2")):
        target = tmp_path / f"{name}.json"
        code, _, err = run(
            [
                "sset",
                "build",
                str(source),
                "-o",
                str(target),
                "--lang",
                "python",
                "-k",
                "50",
                "--jobs",
                jobs,
            ],
            capsys,
        )
        assert code == 0 and err == ""
        built[name] = TriviallySharedSet.load(target)
    assert built["dir"].to_json() == built["tar"].to_json()
    # several parts, summed by the local engine, give the same set again
    monkeypatch.setattr(inputs, "DEFAULT_PART_BYTES", 500)
    code, _, _ = run(["sset", "build", str(archive), "-o", str(tmp_path / "p.json"), "-k", "50", "--lang", "python", "--jobs", "2"], capsys)  # fmt: skip
    assert code == 0
    assert TriviallySharedSet.load(tmp_path / "p.json").to_json() == built["dir"].to_json()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["-k", "-1"], "argument -k: must be in 0..10000000, not -1"),
        (["--max-n", "0"], "argument --max-n: must be in 1..16, not 0"),
    ],
)
def test_sizes_are_checked_like_build_sset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    argv = ["sset", "build", str(CORPUS), "-o", str(tmp_path / "s.json"), "--lang", "python"]
    # the settings table's ranges, checked when the options are parsed (argparse's usage first)
    with pytest.raises(SystemExit) as stop:
        main([*argv, *option])
    out, err = capsys.readouterr()
    assert (stop.value.code, out) == (2, "")
    assert err.splitlines()[-1] == f"crystal-lsp sset build: error: {message}"


def test_scheduler_needs_the_dask_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sset", "build", str(CORPUS), "-o", str(tmp_path / "s.json"), "--engine", "local"]
    code, out, err = run([*argv, "--scheduler", "tcp://127.0.0.1:1"], capsys)
    assert code == 2 and out == ""
    assert err == "crystal-lsp: error: --scheduler needs --engine dask\n"


def test_missing_dask_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in ("dask", "distributed"):
        monkeypatch.setitem(sys.modules, module, None)
    argv = ["sset", "build", str(CORPUS), "-o", str(tmp_path / "s.json"), "--lang", "python"]
    code, out, err = run([*argv, "--engine", "dask", "--tie-break", "canonical"], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("crystal-lsp: error: --engine dask needs the dask extra (")
    assert "; install it with: " in err and err.rstrip().endswith("[dask]'")

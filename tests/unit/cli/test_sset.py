"""``crystal-lsp sset build|show`` through ``main(argv)``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import crystal_lsp
from crystal_lsp.cli.main import main
from crystal_lsp.cli.sset import collect_jobs
from crystal_lsp.metric.sset import TriviallySharedSet

DATA = Path(__file__).resolve().parents[2] / "data"
CORPUS = DATA / "corpus"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_build_then_show_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "s.json.gz"
    code, out, err = run(
        ["sset", "build", str(CORPUS), "-o", str(target), "--lang", "python", "-k", "40"], capsys
    )
    assert code == 0 and err == ""
    assert "k=40" in out and str(target) in out
    sset = TriviallySharedSet.load(target)
    assert (sset.k, sset.language, sset.documents) == (40, "python", 3)
    # Same as building it in Python from the three .py files (README.md is not python).
    docs = [
        crystal_lsp.tokenize(p.read_text(), "python").texts for p in sorted(CORPUS.glob("*.py"))
    ]
    assert sset.counts == crystal_lsp.build_sset(docs, 40).counts

    code, out, err = run(["sset", "show", str(target), "--format", "json", "--top", "5"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["k"] == 40 and doc["language"] == "python" and doc["documents"] == 3
    assert doc["fingerprint"] == sset.fingerprint()
    assert doc["top"] == [{"ngram": list(g), "count": c} for g, c in sset.top(5)]
    assert doc["curve"][0] == {"rank": 1, "count": sset.meta["curve"][0]}
    assert doc["suggested_k"] is None or 1 <= doc["suggested_k"] <= len(sset.meta["curve"])


def test_show_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "s.json"
    assert main(["sset", "build", str(CORPUS), "-o", str(target), "--lang", "python"]) == 0
    capsys.readouterr()
    code, out, _ = run(["sset", "show", str(target), "--top", "3"], capsys)
    assert code == 0
    assert out.startswith("S: python  k=500")
    assert "top 3 n-grams:" in out and "rank      count" in out


def test_build_first_seen_tie_break(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "s.json"
    argv = ["sset", "build", str(CORPUS / "stats.py"), "-o", str(target), "-k", "10"]
    code, _, _ = run([*argv, "--tie-break", "first-seen", "--format", "json"], capsys)
    assert code == 0
    assert TriviallySharedSet.load(target).tie_break == "first-seen"


def test_build_from_dataset_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "s.json"
    argv = [
        "sset",
        "build",
        str(DATA / "tiny_dataset.jsonl"),
        "--split",
        "train",
        "-o",
        str(target),
    ]
    code, out, _ = run([*argv, "-k", "25", "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["documents"] == 8


def test_build_with_mixed_languages_needs_lang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["sset", "build", str(CORPUS), "-o", str(tmp_path / "s.json")], capsys)
    assert code == 2 and out == ""
    assert err.startswith("crystal-lsp: error: the paths hold several languages")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        pytest.param(["sset", "build", "{tmp}/nope", "-o", "{tmp}/s.json"], "no such file", id="missing-path"),
        pytest.param(["sset", "build", "{tmp}/empty", "-o", "{tmp}/s.json"], "no code found", id="no-code"),
        pytest.param(["sset", "build", str(CORPUS), "-o", "{tmp}/s.json", "--lang", "klingon"], "unknown language", id="unknown-lang"),
        pytest.param(["sset", "show", "{tmp}/nope.json"], "cannot read S-set file", id="show-missing"),
        pytest.param(["sset", "show", "{tmp}/garbled.json"], "not a readable S-set file", id="show-garbled"),
    ],
)  # fmt: skip
def test_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "garbled.json").write_text('{"format": ')
    code, out, err = run([a.replace("{tmp}", str(tmp_path)) for a in argv], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith("crystal-lsp: error:") and fragment in err


def test_unreadable_files_are_skipped_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("x = 1\n")
    (src / "b.py").write_bytes(b"\x00binary")
    code, _, err = run(["sset", "build", str(src), "-o", str(tmp_path / "s.json")], capsys)
    assert code == 0
    assert err.splitlines() == [f"crystal-lsp: warning: skipped {src / 'b.py'}: binary file"]


def test_show_corrupted_gzip_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "s.json.gz"
    assert main(["sset", "build", str(CORPUS), "-o", str(target), "--lang", "python"]) == 0
    raw = bytearray(target.read_bytes())
    raw[20] ^= 0xFF
    target.write_bytes(bytes(raw))
    capsys.readouterr()
    code, _, err = run(["sset", "show", str(target)], capsys)
    assert code == 2
    assert err.startswith("crystal-lsp: error:") and len(err.splitlines()) == 1


def test_show_plot_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    target, image = tmp_path / "s.json", tmp_path / "curve.png"
    assert main(["sset", "build", str(CORPUS), "-o", str(target), "--lang", "python"]) == 0
    capsys.readouterr()
    code, _, err = run(["sset", "show", str(target), "--plot", str(image)], capsys)
    assert code == 0 and err == ""
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: object, **kwargs: object) -> object:
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    target = tmp_path / "s.json"
    assert main(["sset", "build", str(CORPUS), "-o", str(target), "--lang", "python"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    code, _, err = run(["sset", "show", str(target), "--plot", str(tmp_path / "x.png")], capsys)
    assert code == 2 and "--plot needs the plot extra (matplotlib); install it with: " in err
    assert err.rstrip().endswith("[plot]'")


def _pair_folder(root: Path) -> Path:
    """A pair-labeled folder (code.jsonl + pairs.jsonl, with a meta.json as shipped sets have)."""
    rows = [json.loads(line) for line in (DATA / "tiny_dataset.jsonl").read_text().splitlines()]
    root.mkdir()
    (root / "code.jsonl").write_text(
        "".join(
            json.dumps({"id": r["id"], "lang": "python", "code": r["code"]}) + "\n" for r in rows
        )
    )
    pairs = [
        {"a": a["id"], "b": b["id"], "label": int(a["class"] == b["class"]), "split": a["split"]}
        for i, a in enumerate(rows)
        for b in rows[i + 1 :]
        if a["split"] == b["split"]
    ]
    (root / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    (root / "meta.json").write_text(json.dumps({"kind": "pair-labeled", "name": "tiny"}))
    return root


def test_build_from_a_pair_labeled_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _pair_folder(tmp_path / "pairs")
    rows = [json.loads(line) for line in (folder / "code.jsonl").read_text().splitlines()]
    target = tmp_path / "s.json"
    argv = ["sset", "build", str(folder), "-o", str(target), "-k", "30", "--format", "json"]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert "skipped" not in err
    sset = TriviallySharedSet.load(target)
    assert (sset.documents, sset.language) == (24, "python")  # the programs, not meta.json
    docs = [crystal_lsp.tokenize(r["code"], "python").texts for r in rows]
    assert sset.counts == crystal_lsp.build_sset(docs, 30).counts
    code, _, _ = run([*argv, "--split", "train"], capsys)
    assert code == 0
    assert TriviallySharedSet.load(target).documents == 8
    # the local reader (score --corpus) takes the same programs, a split's ordered by id
    jobs, language, skipped = collect_jobs([str(folder)], None, "train", 10**6)
    fixture = [json.loads(line) for line in (DATA / "tiny_dataset.jsonl").read_text().splitlines()]
    train = sorted((r for r in fixture if r["split"] == "train"), key=lambda r: str(r["id"]))
    assert [j[1] for j in jobs] == [r["code"] for r in train]
    assert (language, skipped) == ("python", [])

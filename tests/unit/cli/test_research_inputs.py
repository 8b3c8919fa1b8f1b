"""The researcher's bench, round 2: one S default, inputs refused with a one-line error, messages
that point the right way, and item-size bounds (``score``, ``sset build``, ``disting``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crystal_lsp.cli.common import MAX_ITEM_BYTES
from crystal_lsp.cli.main import main
from crystal_lsp.metric.sset import TriviallySharedSet

DATASET = Path(__file__).resolve().parents[2] / "data" / "tiny_dataset.jsonl"
PAIR = {"hypothesis": "x = 1\nprint(x)\n", "references": ["y = 1\nprint(y)\n"]}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(result: tuple[int, str, str], fragment: str) -> None:
    code, out, err = result
    assert code == 2 and out == "", err
    assert err.startswith("crystal-lsp: error:") and len(err.splitlines()) == 1, err
    assert fragment in err, err


def rows(tmp_path: Path, items: list[dict[str, str]], name: str = "d.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in items), encoding="utf-8")
    return path


def items_without(field: str) -> list[dict[str, str]]:
    out = []
    for line in DATASET.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row.pop(field, None)
        out.append(row)
    return out


# --- one S default: the reference's first-seen ties, canonical by name --------------------------


def test_sset_build_default_is_the_references_and_disting_uses_the_same_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "s.json"
    argv = ["sset", "build", str(DATASET), "--split", "train", "-k", "20", "-o", str(target)]
    assert run(argv, capsys)[0] == 0
    built = TriviallySharedSet.load(target)
    assert built.tie_break == "first-seen"
    code, out, _ = run(
        ["disting", str(DATASET), "-k", "20", "--n", "20", "--format", "json"], capsys
    )
    doc = json.loads(out)
    assert code == 0 and doc["sset_fingerprint"] == built.fingerprint()
    assert "|ties:first-seen|" in doc["metrics"][1]["signature"]


def test_canonical_ties_by_name_and_a_given_s_is_named_not_called_the_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "s.json"
    argv = ["sset", "build", str(DATASET), "--split", "train", "-k", "20", "-o", str(target)]
    assert run([*argv, "--tie-break", "canonical"], capsys)[0] == 0
    sset = TriviallySharedSet.load(target)
    assert sset.tie_break == "canonical"
    argv = ["disting", str(DATASET), "--sset", str(target), "--n", "20", "--format", "json"]
    doc = json.loads(run(argv, capsys)[1])
    assert doc["protocol_signature"].endswith(
        f"S:given:{sset.fingerprint()}|ties:canonical|n:20|seed:0"
    )
    assert doc["tie_break"] == "canonical"
    assert "|ties:canonical|" in doc["metrics"][1]["signature"]


# --- accepted without a word -> one-line errors ---------------------------------------------------


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        ({"hypothesis": "", "references": ["x = 1"]}, "d.jsonl:2: the hypothesis has no code"),
        ({"hypothesis": "x = 1", "references": ["x = 1", "# only"]}, "d.jsonl:2: reference 2 has"),
    ],
)
def test_score_jsonl_refuses_an_empty_hypothesis_or_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], item: dict[str, object], fragment: str
) -> None:
    path = rows(tmp_path, [PAIR, item])  # type: ignore[list-item]
    one_line_error(run(["score", "--jsonl", str(path), "--lang", "python"], capsys), fragment)


def test_sset_build_on_one_empty_file_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty.py").write_text("", encoding="utf-8")
    target = tmp_path / "s.json"
    result = run(["sset", "build", str(tmp_path / "empty.py"), "-o", str(target)], capsys)
    one_line_error(result, "no tokens in the given paths")
    assert not target.exists()


def test_a_dataset_without_splits_is_announced_and_named_in_the_protocol(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = rows(tmp_path, items_without("split"))
    code, out, err = run(["disting", str(path), "--n", "20", "-k", "20"], capsys)
    assert code == 0
    assert "no item has a 'split' field" in err and "seed 20220" in err
    protocol = next(line for line in out.splitlines() if "protocol:" in line)
    assert "|split:seeded-30%-train:20220|" in protocol and not protocol.endswith("reference")


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda rows: rows[0].pop("split"), "found: (none) 1, test 16, train 7"),
        (lambda rows: [r.update(split="dev") for r in rows], "found: dev 24"),
    ],
    ids=["some-without", "all-dev"],
)
def test_splits_other_than_train_and_test_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: object, fragment: str
) -> None:
    items = items_without("nothing")
    change(items)  # type: ignore[operator]
    path = rows(tmp_path, items)
    one_line_error(run(["disting", str(path), "--n", "20"], capsys), fragment)


def test_hyp_and_refs_are_documented_short_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = rows(tmp_path, [{"hyp": PAIR["hypothesis"], "refs": PAIR["references"]}])
    short = json.loads(
        run(["score", "--jsonl", str(path), "--lang", "py", "--format", "json"], capsys)[1]
    )
    path = rows(tmp_path, [PAIR])
    full = json.loads(
        run(["score", "--jsonl", str(path), "--lang", "py", "--format", "json"], capsys)[1]
    )
    assert short["bleu"] == full["bleu"]
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert '"hyp" and "refs"' in " ".join(capsys.readouterr().out.split())


# --- messages that point the right way ------------------------------------------------------------


def test_jsonl_without_lang_asks_for_lang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = rows(tmp_path, [{"hypothesis": "a b c", "references": ["a b d"]}])
    one_line_error(run(["score", "--jsonl", str(path)], capsys), "pass --lang")


def test_sset_build_split_nosuch_names_the_splits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sset", "build", str(DATASET), "--split", "nosuch", "-o", str(tmp_path / "s.json")]
    one_line_error(run(argv, capsys), "no item of split 'nosuch'; splits found: test 16, train 8")


def test_disting_header_counts_the_pairs_that_exist(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["disting", str(DATASET), "--n", "1000", "-k", "20"], capsys)
    assert code == 0
    # 16 test programs, 4 per class: 4 * 6 intra-class pairs, 96 inter-class pairs
    assert "24 intra + 96 inter test pairs (--n 1,000), seed 0" in out.splitlines()[0]


def test_bootstrap_settings_are_in_the_signature(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = rows(tmp_path, [PAIR, PAIR | {"id": "b"}, PAIR | {"id": "c"}])
    argv = ["score", "--jsonl", str(path), "--lang", "py", "--format", "json"]
    doc = json.loads(run([*argv, "--bootstrap", "50", "--seed", "7"], capsys)[1])
    assert all("|bs:50|seed:7|" in sig for sig in doc["signatures"].values())
    doc = json.loads(run(argv, capsys)[1])
    assert all("|bs:" not in sig for sig in doc["signatures"].values())


# --- bounded inputs -------------------------------------------------------------------------------


def test_items_over_max_bytes_are_refused_by_sset_build_and_disting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = items_without("nothing")
    items[3]["code"] = "x = 1\n" * 400
    path = rows(tmp_path, items)
    argv = ["sset", "build", str(path), "--max-bytes", "1000", "-o", str(tmp_path / "s.json")]
    one_line_error(run(argv, capsys), "item 'sum-3' has 2,400 bytes, over --max-bytes 1,000")
    argv = ["disting", str(path), "--max-bytes", "1000"]
    one_line_error(run(argv, capsys), "item 'sum-3' has 2,400 bytes, over --max-bytes 1,000")


@pytest.mark.parametrize("command", [["score", "--example"], ["disting", "x.jsonl"]])
def test_max_bytes_has_a_ceiling(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*command, "--max-bytes", str(MAX_ITEM_BYTES + 1)])
    assert exc.value.code == 2
    assert f"must be in 0..{MAX_ITEM_BYTES}" in capsys.readouterr().err

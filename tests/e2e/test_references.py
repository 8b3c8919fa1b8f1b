"""``crystal/score`` references through the server: best-aligned regions, files and folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import DUP_A, UNRELATED, Launcher
from pygls.exceptions import JsonRpcInvalidParams

FAST = {"debounceMs": 0}
RENAMED_A = (
    DUP_A.replace("merge_intervals", "join_ranges")
    .replace("intervals", "ranges")
    .replace("ordered", "by_start")
)


def _files(count: int) -> dict[str, str]:
    """Many files of unrelated code, the original in one whose name sorts last."""
    files = {
        f"lib/m{k:03d}.py": UNRELATED.replace("parse_settings", f"parse_settings_{k}")
        for k in range(count)
    }
    files["lib/zz_intervals.py"] = DUP_A
    return files


async def test_auto_references_are_the_best_regions(launcher: Launcher) -> None:
    ws = launcher.workspace(_files(40))
    s = await launcher.start(ws, configuration=FAST)
    await s.ready()
    result = await s.request(
        "crystal/score",
        {"hypothesis": {"text": RENAMED_A}, "references": "auto", "language": "python"},
    )
    refs = result["references"]
    assert refs[0]["label"].startswith("lib/zz_intervals.py:1-")
    assert refs[0]["uri"] == s.uri("lib/zz_intervals.py")
    assert all(r["crystalbleu"] > 0 for r in refs)
    assert [r["crystalbleu"] for r in refs] == sorted(
        (r["crystalbleu"] for r in refs), reverse=True
    )
    assert result["crystalbleu"] > 0.3
    (search,) = result["referenceSearch"]
    assert search["within"] == "workspace" and search["aligned"] >= 1


async def test_file_and_folder_references_mean_their_best_regions(launcher: Launcher) -> None:
    ws = launcher.workspace(_files(5))
    s = await launcher.start(ws, configuration=FAST)
    await s.ready()
    hyp = {"text": RENAMED_A}
    by_file = await s.request(
        "crystal/score",
        {
            "hypothesis": hyp,
            "references": [{"uri": s.uri("lib/zz_intervals.py")}],
            "language": "python",
        },
    )
    whole = await s.request(
        "crystal/score",
        {
            "hypothesis": hyp,
            "references": [{"uri": s.uri("lib/zz_intervals.py"), "whole": True}],
            "language": "python",
        },
    )
    assert by_file["referenceSearch"][0]["within"] == "lib/zz_intervals.py"
    assert by_file["references"][0]["label"].startswith("lib/zz_intervals.py:")
    assert "referenceSearch" not in whole
    folder = await s.request(
        "crystal/score",
        {"hypothesis": hyp, "references": [{"uri": s.uri("lib")}], "language": "python"},
    )
    assert folder["referenceSearch"][0]["within"] == "lib"
    assert folder["references"][0]["label"].startswith("lib/zz_intervals.py:")


async def test_a_reference_in_another_language_is_refused(
    launcher: Launcher, tmp_path: Path
) -> None:
    ws = launcher.workspace({"a.py": DUP_A, "b.js": "function f(a, b) { return a + b; }\n"})
    s = await launcher.start(ws, configuration=FAST)
    await s.ready()
    with pytest.raises(JsonRpcInvalidParams, match=r"b\.js is javascript"):
        await s.request(
            "crystal/score",
            {
                "hypothesis": {"uri": s.uri("a.py")},
                "references": [{"uri": s.uri("b.js"), "whole": True}],
            },
        )

"""crystal_lsp/data/README.md lists every built-in S set with the counts stored in it."""

from __future__ import annotations

import re
from pathlib import Path

from crystal_lsp.metric.sset import TriviallySharedSet

DATA = Path(__file__).resolve().parents[3] / "crystal_lsp" / "data"
ROW = re.compile(r"^\| `(sset-[a-z+]+\.json\.gz)` \| .* \| ([\d,]+) \| ([\d,]+) \|$", re.M)


def test_readme_lists_every_builtin_set_with_its_counts() -> None:
    rows = {
        m[1]: (int(m[2].replace(",", "")), int(m[3].replace(",", "")))
        for m in ROW.finditer((DATA / "README.md").read_text(encoding="utf-8"))
    }
    shipped = sorted(p.name for p in DATA.glob("sset-*.json.gz") if ".normalized." not in p.name)
    assert sorted(rows) == shipped
    for name, (files, tokens) in rows.items():
        sset = TriviallySharedSet.load(DATA / name)
        assert (sset.documents, sset.tokens) == (files, tokens), name
        assert sset.tie_break == "canonical"

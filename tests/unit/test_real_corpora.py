"""The real-code judge's corpora (``bench/real/corpora.py``): a kept folder inside a package's zip."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from bench_scripts import load

REPO = Path(__file__).resolve().parents[2]


def _corpora() -> ModuleType:
    return load("real/corpora.py", "real_corpora")


def _src_zip(path: Path) -> None:
    """A JDK-like ``src.zip``: two modules, the kept package with a subpackage."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("java.base/java/time/Instant.java", "class Instant {}\n")
        z.writestr("java.base/java/time/chrono/Era.java", "interface Era {}\n")
        # a name that starts like the kept folder, and is not it
        z.writestr("java.base/java/timer/Other.java", "class Other {}\n")
        z.writestr("java.base/java/util/List.java", "interface List {}\n")
        z.writestr("java.sql/java/sql/Date.java", "class Date {}\n")


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_a_kept_path_through_a_zip_unpacks_only_that_folder(tmp_path: Path) -> None:
    corpora = _corpora()
    _src_zip(tmp_path / "usr/lib/jvm/lib/src.zip")
    kept = corpora.locate(tmp_path, "usr/lib/jvm/lib/src.zip/java.base/java/time")
    assert kept.is_dir()
    assert _files(kept) == ["Instant.java", "chrono/Era.java"]
    assert not (kept.parent / "util").exists() and not (kept.parent / "timer").exists()


def test_a_plain_kept_path_is_the_folder_itself_and_a_final_zip_is_unpacked_whole(
    tmp_path: Path,
) -> None:
    corpora = _corpora()
    (tmp_path / "pkg" / "src").mkdir(parents=True)
    assert corpora.locate(tmp_path, "pkg/src") == tmp_path / "pkg" / "src"
    _src_zip(tmp_path / "pkg" / "src.zip")
    whole = corpora.locate(tmp_path, "pkg/src.zip")
    assert len(_files(whole)) == 5 and (whole / "java.sql/java/sql/Date.java").is_file()


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg-deb (Debian)")
def test_a_debian_package_holding_a_zip_is_unpacked_to_the_kept_folder(tmp_path: Path) -> None:
    corpora = _corpora()
    tree = tmp_path / "tree"
    _src_zip(tree / "usr/lib/jvm/openjdk-17/lib/src.zip")
    (tree / "DEBIAN").mkdir()
    (tree / "DEBIAN" / "control").write_text(
        "Package: fake-jdk-source\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: bench <bench@localhost>\nDescription: test\n"
    )
    deb = tmp_path / "fake.deb"
    subprocess.run(["dpkg-deb", "--build", "-Zgzip", str(tree), str(deb)], check=True)
    corpora.unpack(deb, tmp_path / "x")
    keep = "usr/lib/jvm/openjdk-17/lib/src.zip/java.base/java/time"
    assert _files(corpora.locate(tmp_path / "x", keep)) == ["Instant.java", "chrono/Era.java"]


def test_the_new_held_out_projects_are_pinned_with_their_languages() -> None:
    corpora = _corpora()
    java_time = corpora.PROJECTS["java_time"]
    assert java_time.registry == "debian" and java_time.lang == "java"
    assert java_time.keep.endswith("src.zip/java.base/java/time")
    assert corpora.PROJECTS["pythonnet"].lang == "csharp"
    for project in corpora.PROJECTS.values():
        assert project.lang in corpora.SOURCE_SUFFIXES
        assert "/java/util" not in project.keep  # tuned on: never a held-out corpus

"""Every package directory is listed in pyproject.toml (packages are listed explicitly)."""

from __future__ import annotations

import sys
from pathlib import Path

import crystal_lsp

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


def _setuptools() -> dict[str, object]:
    with open(REPO / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]  # type: ignore[no-any-return]


def _python_package_dirs(root: Path) -> set[Path]:
    # crystal_lsp/examples/ holds example sources (package data), not importable modules.
    return {
        p.parent
        for p in root.rglob("*.py")
        if "__pycache__" not in p.parts and "examples" not in p.relative_to(root).parts
    }


def test_every_directory_with_python_files_is_a_listed_package() -> None:
    packages = set(_setuptools()["packages"])  # type: ignore[call-overload]
    root = REPO / "crystal_lsp"
    for directory in _python_package_dirs(root):
        name = ".".join(directory.relative_to(REPO).parts)
        assert name in packages, f"{directory} holds .py files but {name} is not in packages"


def test_data_directories_are_listed_packages() -> None:
    packages = set(_setuptools()["packages"])  # type: ignore[call-overload]
    assert {"crystal_lsp.data", "crystal_lsp.examples"} <= packages


def test_hooks_is_installed_as_crystal_lsp_hooks() -> None:
    setuptools = _setuptools()
    assert "crystal_lsp_hooks" in setuptools["packages"]  # type: ignore[operator]
    assert setuptools["package-dir"] == {"crystal_lsp_hooks": "hooks"}  # type: ignore[index]
    assert _python_package_dirs(REPO / "hooks") <= {REPO / "hooks"}


def test_listed_packages_exist() -> None:
    package_dir = _setuptools()["package-dir"]
    for name in _setuptools()["packages"]:  # type: ignore[attr-defined]
        top, *rest = name.split(".")
        base = REPO / package_dir.get(top, top)  # type: ignore[attr-defined]
        assert (base.joinpath(*rest)).is_dir(), name


def test_package_data_ships_the_examples_and_builtin_sets() -> None:
    package_data = _setuptools()["package-data"]
    assert "*.json.gz" in package_data["crystal_lsp.data"]  # type: ignore[index]
    assert "*.java" in package_data["crystal_lsp.examples"]  # type: ignore[index]
    data = Path(crystal_lsp.__file__).parent
    assert (data / "data" / "sset-python.json.gz").is_file()
    assert (data / "examples" / "fig1_reference.java").is_file()

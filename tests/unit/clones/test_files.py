"""Which files a scan sees: git's listing, a directory walk, globs."""

from __future__ import annotations

import pathlib

import pytest
from scan_samples import git, git_init, write_tree

from crystal_lsp import CrystalError
from crystal_lsp.clones.files import filter_paths, list_files
from crystal_lsp.clones.git import changed_lines, git_available, git_root
from crystal_lsp.clones.settings import ScanConfig

TREE = {
    "src/app.py": "x = 1\n",
    "src/util.py": "y = 2\n",
    "src/build/out.py": "generated = 1\n",
    "node_modules/lib/index.js": "module.exports = 1;\n",
    "web/app.min.js": "var a=1;\n",
    "web/app.js": "var a = 1;\n",
    "logs/run.log": "log\n",
    "tmp/scratch.py": "z = 3\n",
    "dir with space/naïve file.py": "w = 4\n",
    "docs/ünïcode €.md": "# doc\n",
    ".gitignore": "*.log\ntmp/\n",
}
VISIBLE = [
    ".gitignore",
    "dir with space/naïve file.py",
    "docs/ünïcode €.md",
    "src/app.py",
    "src/util.py",
    "web/app.js",
]


@pytest.fixture
def tree(tmp_path: pathlib.Path) -> pathlib.Path:
    return write_tree(tmp_path / "tree", TREE)


@pytest.fixture
def repo(tree: pathlib.Path) -> pathlib.Path:
    return git_init(tree)


@pytest.fixture
def no_git(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_a_directory_git_ignores_is_walked(repo: pathlib.Path) -> None:
    # e.g. a package installed into a virtualenv inside the clone (scan --demo does this)
    write_tree(repo, {"tmp/pkg/a.py": "a = 1\n", "tmp/pkg/b.py": "b = 2\n"})
    assert list_files(str(repo / "tmp" / "pkg"), ScanConfig()) == ["a.py", "b.py"]


def test_git_listing_tracked_and_untracked_not_ignored(repo: pathlib.Path) -> None:
    assert git(repo, "ls-files", "tmp/scratch.py", "logs/run.log") == ""  # ignored, not added
    write_tree(repo, {"new/untracked.py": "n = 1\n", "tmp/also-ignored.py": "i = 1\n"})
    assert list_files(str(repo), ScanConfig()) == sorted([*VISIBLE, "new/untracked.py"])


def test_git_listing_of_a_subdirectory(repo: pathlib.Path) -> None:
    assert git_root(str(repo / "src")) == str(repo.resolve())
    assert list_files(str(repo / "src"), ScanConfig()) == ["app.py", "util.py"]


def test_git_listing_without_default_excludes(repo: pathlib.Path) -> None:
    files = list_files(str(repo), ScanConfig(exclude=()))
    assert {"node_modules/lib/index.js", "src/build/out.py", "web/app.min.js"} <= set(files)
    assert "logs/run.log" not in files


def test_deleted_tracked_files_are_not_listed(repo: pathlib.Path) -> None:
    (repo / "src/util.py").unlink()
    assert "src/util.py" not in list_files(str(repo), ScanConfig())


def test_walk_outside_git(tree: pathlib.Path) -> None:
    assert git_root(str(tree)) is None
    write_tree(
        tree,
        {
            "src/__pycache__/app.cpython-311.pyc": b"\x00",
            ".venv/pyvenv.cfg": "home = /usr/bin\n",  # a virtualenv: skipped
            ".venv/lib/site.py": "v = 1\n",
            "lib/venv/__init__.py": "def make(): pass\n",  # a package named venv: code
            ".git/config": "[core]\n",
            "src/.gitignore": "util.py\n",  # only the top-level .gitignore counts in a walk
        },
    )
    expected = sorted([*VISIBLE, "src/.gitignore", "lib/venv/__init__.py"])
    assert list_files(str(tree), ScanConfig()) == expected


def test_walk_without_a_gitignore(tree: pathlib.Path) -> None:
    (tree / ".gitignore").unlink()
    files = list_files(str(tree), ScanConfig())
    assert "logs/run.log" in files and "tmp/scratch.py" in files


def test_walk_when_git_is_missing(repo: pathlib.Path, no_git: None) -> None:
    assert not git_available()
    assert git_root(str(repo)) is None
    write_tree(repo, {"new/untracked.py": "n = 1\n"})
    assert list_files(str(repo), ScanConfig()) == sorted([*VISIBLE, "new/untracked.py"])
    with pytest.raises(CrystalError, match="--new-since needs a git repository"):
        changed_lines(str(repo), "HEAD")


@pytest.mark.parametrize(
    ("include", "extend_exclude", "expected"),
    [
        pytest.param((), (), ["a/x.py", "a/y.js", "b/z.py", "c d/é.py"], id="all"),
        pytest.param(("*.py",), (), ["a/x.py", "b/z.py", "c d/é.py"], id="include-suffix"),
        pytest.param(("a/",), (), ["a/x.py", "a/y.js"], id="include-directory"),
        pytest.param(("a/**", "b/*.py"), (), ["a/x.py", "a/y.js", "b/z.py"], id="two-includes"),
        pytest.param((), ("a/",), ["b/z.py", "c d/é.py"], id="exclude-directory"),
        pytest.param((), ("**/*.js", "c d/"), ["a/x.py", "b/z.py"], id="exclude-two"),
        pytest.param(("*.py",), ("b/**",), ["a/x.py", "c d/é.py"], id="include-and-exclude"),
        pytest.param((), ("é.py",), ["a/x.py", "a/y.js", "b/z.py"], id="unicode-name"),
    ],
)
def test_filter_paths(
    include: tuple[str, ...], extend_exclude: tuple[str, ...], expected: list[str]
) -> None:
    paths = ["a/x.py", "a/y.js", "b/z.py", "c d/é.py", "node_modules/m.js", "w/v.min.js"]
    config = ScanConfig(include=include, extend_exclude=extend_exclude)
    assert filter_paths(paths, config) == expected


def test_globs_apply_to_the_git_listing(repo: pathlib.Path) -> None:
    config = ScanConfig(include=("*.py",), extend_exclude=("dir with space/",))
    assert list_files(str(repo), config) == ["src/app.py", "src/util.py"]

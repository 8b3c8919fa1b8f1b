"""Real projects at pinned versions, fetched with the package clients and kept as git repositories.

Each corpus is one folder of a registry package (PyPI sdist via ``pip download --no-deps
--no-binary :all:``, npm tarball via ``npm pack``, Debian package via ``apt-get download``
and ``dpkg-deb -x``, never installed), unpacked and committed to a fresh git repository (the
scanner lists files with git), cached under ``~/.cache/crystal-lsp-bench/real``.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_CACHE = Path.home() / ".cache" / "crystal-lsp-bench" / "real"
SOURCE_SUFFIXES = {
    "python": (".py",),
    "javascript": (".js",),
    "typescript": (".ts",),
    "c": (".c", ".h"),
    "go": (".go",),
    "rust": (".rs",),
    "cpp": (".h", ".hh", ".hpp", ".hxx", ".inl", ".c", ".cc", ".cpp", ".cxx"),
    "ruby": (".rb",),
    "php": (".php",),
    "java": (".java",),
    "csharp": (".cs",),
}


@dataclass(frozen=True)
class Project:
    """A pinned registry package and the folder of it that is scanned."""

    name: str
    registry: str  # "pypi", "npm" or "debian"
    spec: str  # rich==13.9.4, moment@2.30.1, ruby-rack=2.2.22-0+deb12u2
    keep: str  # folder inside the unpacked archive; may pass through a .zip in it (lib/src.zip/java.base)
    lang: str  # python, javascript, typescript
    note: str = ""

    @property
    def version(self) -> str:
        if self.registry == "debian":
            return self.spec.split("=", 1)[1]
        return self.spec.replace("@", "==").split("==")[-1]


PROJECTS: dict[str, Project] = {
    p.name: p
    for p in (
        Project("rich", "pypi", "rich==13.9.4", "rich-13.9.4/rich", "python"),
        Project("werkzeug", "pypi", "werkzeug==3.1.3", "werkzeug-3.1.3/src/werkzeug", "python"),
        Project("moment", "npm", "moment@2.30.1", "package/src", "javascript"),
        Project(
            "pip",
            "pypi",
            "pip==24.3.1",
            "pip-24.3.1/src/pip",
            "python",
            "vendored code: src/pip/_vendor holds about three quarters of the lines",
        ),
        Project(
            "rxjs",
            "npm",
            "rxjs@7.8.1",
            "package/src",
            "typescript",
            "TypeScript sources shipped in the npm package; many overload signatures",
        ),
        Project(
            "django",
            "pypi",
            "django==5.1.3",
            "Django-5.1.3/django",
            "python",
            "a large web framework: per-backend database code, parallel field and form classes",
        ),
        Project(
            "three",
            "npm",
            "three@0.170.0",
            "package/src",
            "javascript",
            "families of parallel classes (vectors, materials, typed-array attributes, nodes)",
        ),
        Project(
            "trpc",
            "npm",
            "@trpc/server@10.45.2",
            "package/src",
            "typescript",
            "held out: judged before any tuning on it; parallel framework adapters",
        ),
        Project(
            "pillow",
            "pypi",
            "pillow==11.0.0",
            "pillow-11.0.0/src/libImaging",
            "c",
            "held out: judged before any tuning on it; C image codecs and per-mode conversions",
        ),
        Project(
            "jinja2",
            "pypi",
            "jinja2==3.1.4",
            "jinja2-3.1.4/src/jinja2",
            "python",
            "held out: judged once, after issue 21's last change; sync/async twins",
        ),
        Project(
            "axios",
            "npm",
            "axios@1.7.9",
            "package/lib",
            "javascript",
            "held out: judged once, after issue 21's last change; parallel request adapters",
        ),
        Project(
            "webpack",
            "npm",
            "webpack@5.97.1",
            "package/lib",
            "javascript",
            "held out: judged once, after issue 21's last change; families of plugins and templates",
        ),
        Project(
            "gin",
            "debian",
            "golang-github-gin-gonic-gin-dev=1.8.1-1",
            "usr/share/gocode/src/github.com/gin-gonic/gin",
            "go",
            "held out: judged by two labelers before any tuning on it; Go web framework with tests",
        ),
        Project(
            "serde_json",
            "debian",
            "librust-serde-json-dev=1.0.87-1",
            "usr/share/cargo/registry/serde_json-1.0.87",
            "rust",
            "held out: judged by two labelers before any tuning on it; per-type macros, tests",
        ),
        Project(
            "googlemock",
            "debian",
            "googletest=1.12.1-0.2",
            "usr/src/googletest/googlemock",
            "cpp",
            "held out: judged by two labelers before any tuning on it; C++ headers, .cc sources, tests",
        ),
        Project(
            "rack",
            "debian",
            "ruby-rack=2.2.22-0+deb12u2",
            "usr/share/rubygems-integration/all/gems/rack-2.2.22",
            "ruby",
            "held out: judged by two labelers before any tuning on it; Ruby middleware, few copies",
        ),
        Project(
            "symfony_console",
            "debian",
            "php-symfony-console=5.4.53+dfsg-0+deb12u1",
            "usr/share/php/Symfony/Component/Console",
            "php",
            "held out: judged by two labelers before any tuning on it; PHP helpers, parallel commands",
        ),
        Project(
            "java_time",
            "debian",
            "openjdk-17-source=17.0.21.1+2-1~deb12u1",
            "usr/lib/jvm/openjdk-17/lib/src.zip/java.base/java/time",
            "java",
            "held out: judged by two labelers before any tuning on it; JSR-310 date/time, "
            "parallel temporal classes (not java/util, which planted Java used)",
        ),
        Project(
            "pythonnet",
            "pypi",
            "pythonnet==3.0.5",
            "pythonnet-3.0.5/src/runtime",
            "csharp",
            "held out: judged by two labelers before any tuning on it; the C# runtime of "
            "Python.NET, per-type conversions and interop",
        ),
        Project(
            "jdk_http",
            "debian",
            "openjdk-17-source=17.0.21.1+2-1~deb12u1",
            "usr/lib/jvm/openjdk-17/lib/src.zip/java.net.http/jdk/internal/net/http",
            "java",
            "held out: judged by two labelers before any tuning on it; the JDK's HTTP/1.1 and "
            "HTTP/2 client internals",
        ),
    )
}


def _run(argv: list[str], cwd: Path) -> None:
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr[-800:]}")


def download(project: Project, dest: Path) -> Path:
    """The package's archive, downloaded into dest with the registry's own client."""
    dest.mkdir(parents=True, exist_ok=True)
    if project.registry == "pypi":
        argv = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "-d",
            str(dest),
        ]
        _run([*argv, project.spec], dest)
    elif project.registry == "npm":
        _run(["npm", "pack", "--silent", project.spec], dest)
    elif project.registry == "debian":  # the .deb only: never installed, unpacked below
        _run(["apt-get", "download", project.spec], dest)
    else:
        raise ValueError(f"unknown registry {project.registry!r}")
    found = [p for p in dest.iterdir() if p.suffix in (".gz", ".tgz", ".zip", ".deb")]
    if len(found) != 1:
        raise RuntimeError(f"expected one archive in {dest}, found {found}")
    return found[0]


def unpack(archive: Path, dest: Path) -> None:
    if archive.suffix == ".deb":
        dest.mkdir(parents=True, exist_ok=True)
        _run(["dpkg-deb", "-x", str(archive), str(dest)], dest)
        return
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            z.extractall(dest)
        return
    with tarfile.open(archive) as t:
        t.extractall(dest, filter="data")


def locate(base: Path, keep: str) -> Path:
    """The folder ``keep`` under base; a ``.zip`` file on its way is unpacked there.

    Only the zip's members under the rest of the path are extracted (a JDK's ``lib/src.zip``
    holds every module's sources), next to the zip as ``<name>.zip.x``.
    """
    parts = Path(keep).parts
    here = base
    for i, part in enumerate(parts):
        here = here / part
        if here.suffix == ".zip" and here.is_file():
            rest = "/".join(parts[i + 1 :])
            out = here.with_name(here.name + ".x")
            with zipfile.ZipFile(here) as z:
                members = [m for m in z.namelist() if not rest or m.startswith(rest + "/")]
                z.extractall(out, members)
            return locate(out, rest)
    return here


def git_commit(root: Path) -> None:
    ident = ["-c", "user.name=crystal-bench", "-c", "user.email=bench@localhost"]
    _run(["git", "init", "-q"], root)
    _run(["git", "add", "-A", "-f", "."], root)
    _run(["git", *ident, "commit", "-q", "--no-gpg-sign", "-m", "corpus"], root)


def fetch(project: Project, cache: Path = DEFAULT_CACHE) -> Path:
    """The corpus folder (a git repository), fetched and committed on first use."""
    root = cache / "corpora" / f"{project.name}-{project.version}"
    if (root / ".git").is_dir() and _marker(root).is_file():
        return root
    if root.exists():
        shutil.rmtree(root)
    with tempfile.TemporaryDirectory(prefix="real-fetch-") as tmp:
        archive = download(project, Path(tmp) / "dl")
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        unpack(archive, Path(tmp) / "x")
        kept = locate(Path(tmp) / "x", project.keep)
        if not kept.is_dir():
            raise RuntimeError(f"{project.spec}: no folder {project.keep} in {archive.name}")
        root.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(kept), root)
    git_commit(root)
    _marker(root).write_text(f"{archive.name} sha256:{digest}\n")
    return root


def _marker(root: Path) -> Path:
    """Written last, next to the corpus: the archive's name and digest (a complete fetch)."""
    return root.with_name(root.name + ".archive")


def describe(project: Project, root: Path) -> dict[str, Any]:
    """Files and lines of the project's own language, and the archive's digest."""
    suffixes = SOURCE_SUFFIXES[project.lang]
    files = [p for p in root.rglob("*") if p.is_file() and p.suffix in suffixes]
    files = [p for p in files if ".git" not in p.relative_to(root).parts]
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    return {
        "spec": project.spec,
        "registry": project.registry,
        "keep": project.keep,
        "lang": project.lang,
        "files": len(files),
        "lines": lines,
        "archive": _marker(root).read_text().strip(),
        "note": project.note,
    }

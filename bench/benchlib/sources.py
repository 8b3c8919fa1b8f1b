"""The source corpora the clone benchmarks plant copies into: CPython's standard library of the
running interpreter (tests excluded) and a subset of the JDK's ``java.base`` sources, each
prepared once under a work folder."""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
import zipfile
from pathlib import Path

PY_EXCLUDED_DIRS = {"test", "tests", "idle_test", "site-packages", "__pycache__"}


# Debian's openjdk-17-source first (what the issue names), then any other JDK's src.zip.
JAVA_SRC_ZIPS = (
    "/usr/lib/jvm/openjdk-17/src.zip",
    "/usr/lib/jvm/openjdk-17/lib/src.zip",
    "/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip",
    "/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip",
)


# java.base packages kept: java.util (with its subpackages), java.io and java.time
# (with theirs): 533 files, 324k lines in JDK 17, close to CPython's 734 files, 327k lines.
JAVA_PACKAGES = ("java/util/", "java/io/", "java/time/")


def python_stdlib() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def python_corpus_files(root: Path) -> list[str]:
    """Relative paths of the stdlib's .py files, tests and site-packages excluded."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in PY_EXCLUDED_DIRS)
        for f in sorted(filenames):
            if f.endswith(".py") and not f.startswith("test_"):
                out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(out)


def find_java_src_zip(explicit: str | None = None) -> Path:
    for cand in [explicit] if explicit else JAVA_SRC_ZIPS:
        if cand and Path(cand).is_file():
            return Path(cand).resolve()
    raise FileNotFoundError(
        "no JDK src.zip found: apt-get install -y openjdk-17-source, or pass --java-src"
    )


def prepare_original(lang: str, workdir: Path, java_src: str | None = None) -> dict[str, object]:
    """Copy the unmodified corpus to workdir/<lang>/original once; return its description."""
    base = workdir / lang
    orig = base / "original"
    info_path = base / "original.json"
    if info_path.is_file() and orig.is_dir():
        info: dict[str, object] = json.loads(info_path.read_text())
        return info
    if orig.exists():
        shutil.rmtree(orig)
    orig.mkdir(parents=True)
    if lang == "python":
        src = python_stdlib()
        files = python_corpus_files(src)
        for rel in files:
            dst = orig / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, dst)
        source = f"CPython {sys.version.split()[0]} stdlib at {src}"
    else:
        zpath = find_java_src_zip(java_src)
        files = []
        with zipfile.ZipFile(zpath) as z:
            for name in sorted(z.namelist()):
                if not name.startswith("java.base/") or not name.endswith(".java"):
                    continue
                rel = name[len("java.base/") :]
                if not rel.startswith(JAVA_PACKAGES):
                    continue
                dst = orig / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes(z.read(name))
                files.append(rel)
        source = f"{zpath} java.base/{{{','.join(p.rstrip('/') for p in JAVA_PACKAGES)}}}"
    lines = sum((orig / f).read_bytes().count(b"\n") for f in files)
    info = {"lang": lang, "source": source, "files": len(files), "lines": lines}
    info_path.write_text(json.dumps(info, indent=1) + "\n")
    return info

"""Build the S sets shipped in crystal_lsp/data/ (run by maintainers, not by tests).

python bench/build_builtin_ssets.py [--only LANG ...] [-k 1000]

For each language two sets are written: over raw tokens (``sset-LANG.json.gz``) and over the
normalized view used by the clone finder (``sset-LANG.normalized.json.gz``). Corpora, read in
place from this machine:

* python: CPython's standard library without tests and site-packages;
* java: the .java files of a JDK's lib/src.zip (the first under /usr/lib/jvm), without
  locale/character data tables and files over 150 kB;
* javascript: npm's own sources and bundled dependencies (/usr/lib/node_modules/npm), without
  minified files;
* c: the C headers directly under /usr/include and /usr/include/linux;
* cpp: the C++ standard library headers under /usr/include/c++/<version>.

k = 1000 is stored so that any k <= 1000 can be taken as a prefix (``restricted``).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import sysconfig
import time
import zipfile
from collections.abc import Iterator

from crystal_lsp.metric.sset import build_sset
from crystal_lsp.text.entries import detect_status
from crystal_lsp.text.lexers import lexer_label, resolve_lexer
from crystal_lsp.text.parallel import tokenize_many
from crystal_lsp.text.sources import SkippedFile, source_from_bytes
from crystal_lsp.text.views import categories, normalized

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "crystal_lsp", "data")
Job = tuple[str, str, str]


def _decoded(name: str, data: bytes, language: str) -> Job | None:
    try:
        src = source_from_bytes(name, data)
    except SkippedFile:
        return None
    if detect_status(src.text) != "ok":
        return None
    return (name, src.text, language)


def _files(
    root: str, suffixes: tuple[str, ...], skip_dirs: set[str], max_bytes: int = 400_000
) -> Iterator[str]:
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip_dirs)
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            if (
                name.endswith(suffixes)
                and not name.startswith("test_")
                and os.path.getsize(path) <= max_bytes
            ):
                yield path


def _read(paths: Iterator[str], language: str, root: str) -> list[Job]:
    jobs = []
    for path in paths:
        with open(path, "rb") as fh:
            job = _decoded(os.path.relpath(path, root), fh.read(), language)
        if job is not None:
            jobs.append(job)
    return jobs


def python_files() -> tuple[list[Job], str]:
    root = sysconfig.get_paths()["stdlib"]
    skip = {"test", "tests", "site-packages", "__pycache__", "idle_test"}
    return _read(
        _files(root, (".py",), skip), "python", root
    ), f"CPython {sys.version.split()[0]} standard library (no tests)"


def java_files() -> tuple[list[Job], str]:
    for zip_path in sorted(glob.glob("/usr/lib/jvm/*/lib/src.zip")):
        if os.path.exists(zip_path):
            break
    else:
        return [], ""
    jobs = []
    with zipfile.ZipFile(zip_path) as zf:
        for info in sorted(zf.infolist(), key=lambda i: i.filename):
            name = info.filename
            # Locale and character tables are generated data, not code people write.
            if (
                not name.endswith(".java")
                or "/test/" in name
                or "/resources/" in name
                or "CharacterData" in name
                or info.file_size > 150_000
            ):
                continue
            job = _decoded(name, zf.read(info), "java")
            if job is not None:
                jobs.append(job)
    return jobs, f"JDK class library ({zip_path})"


def javascript_files() -> tuple[list[Job], str]:
    root = "/usr/lib/node_modules/npm"
    paths = (
        p
        for p in _files(root, (".js", ".mjs", ".cjs"), {"test", "tests", "docs"})
        if ".min." not in p
    )
    return _read(paths, "javascript", root), "npm's sources and bundled dependencies"


def c_files() -> tuple[list[Job], str]:
    paths = sorted(glob.glob("/usr/include/*.h") + glob.glob("/usr/include/linux/*.h"))
    return _read(
        iter(paths), "c", "/usr/include"
    ), "C headers of /usr/include and /usr/include/linux"


def cpp_files() -> tuple[list[Job], str]:
    roots = sorted(glob.glob("/usr/include/c++/*"))
    if not roots:
        return [], ""
    root = roots[-1]
    paths = (p for p in _files(root, ("",), set()) if os.path.isfile(p))
    return _read(paths, "cpp", root), f"C++ standard library headers ({root})"


CORPORA = {
    "python": python_files,
    "java": java_files,
    "javascript": javascript_files,
    "c": c_files,
    "cpp": cpp_files,
}


def build(language: str, k: int) -> None:
    started = time.perf_counter()
    jobs, origin = CORPORA[language]()
    if not jobs:
        print(f"{language}: no corpus on this machine, skipped")
        return
    streams = tokenize_many(jobs)
    label = lexer_label(resolve_lexer(language))
    # canonical ties: the shipped sets do not depend on the order files are found in
    raw = build_sset(
        (t.texts for t in streams), k, 4, language=language, tokenizer=label, tie_break="canonical"
    )
    norm = build_sset(
        (normalized(t.texts, categories(t.texts, t.types)) for t in streams),
        k,
        4,
        language=language,
        tokenizer=label + " view:normalized",
        tie_break="canonical",
    )
    for sset, suffix in ((raw, ""), (norm, ".normalized")):
        sset.meta["source"] = origin
        sset.meta["files"] = len(jobs)
        sset.meta["curve"] = sset.meta["curve"][:5000]
        path = os.path.join(OUT, f"sset-{language}{suffix}.json.gz")
        sset.save(path)
        print(
            f"{language}{suffix}: {len(jobs)} files, {sset.tokens:,} tokens, k={k} -> "
            f"{os.path.relpath(path)} ({os.path.getsize(path):,} bytes)"
        )
    print(f"  {time.perf_counter() - started:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", choices=sorted(CORPORA), default=sorted(CORPORA))
    parser.add_argument("-k", type=int, default=1000)
    args = parser.parse_args()
    for language in args.only:
        build(language, args.k)


if __name__ == "__main__":
    main()

"""Build the S sets shipped in crystal_lsp/data/ (run by maintainers, not by tests).

python bench/build_builtin_ssets.py [--python-stdlib DIR] [--jdk-src ZIP] [-k 1000]

Python: every .py file of CPython's standard library except tests and site-packages.
Java: the .java files of a JDK's lib/src.zip (the first found under /usr/lib/jvm), without\nlocale/character data tables and files over 150 kB.
k = 1000 is stored so that any k <= 1000 can be taken as a prefix (``restricted``).
"""

from __future__ import annotations

import argparse
import os
import sysconfig
import time
import zipfile

from crystal_lsp.lexers import lexer_label, resolve_lexer
from crystal_lsp.parallel import tokenize_many
from crystal_lsp.sources import SkippedFile, source_from_bytes
from crystal_lsp.sset import build_sset

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "crystal_lsp", "data")


def python_files(root: str) -> list[tuple[str, str, str]]:
    jobs = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in {"test", "tests", "site-packages", "__pycache__", "idle_test"}
        )
        for name in sorted(files):
            if name.endswith(".py") and not name.startswith("test_"):
                path = os.path.join(dirpath, name)
                with open(path, "rb") as fh:
                    try:
                        src = source_from_bytes(path, fh.read())
                    except SkippedFile:
                        continue
                jobs.append((os.path.relpath(path, root), src.text, "python"))
    return jobs


def java_files(zip_path: str) -> list[tuple[str, str, str]]:
    jobs = []
    with zipfile.ZipFile(zip_path) as zf:
        for info in sorted(zf.infolist(), key=lambda i: i.filename):
            name = info.filename
            # Locale and character tables are generated data, not code people write; they
            # would fill S with string-table n-grams.
            if (
                not name.endswith(".java")
                or "/test/" in name
                or "/resources/" in name
                or "CharacterData" in name
                or info.file_size > 150_000
            ):
                continue
            if True:
                try:
                    src = source_from_bytes(info.filename, zf.read(info))
                except SkippedFile:
                    continue
                jobs.append((info.filename, src.text, "java"))
    return jobs


def build(jobs: list[tuple[str, str, str]], language: str, k: int, origin: str) -> None:
    started = time.perf_counter()
    streams = tokenize_many(jobs)
    sset = build_sset(
        (t.texts for t in streams),
        k,
        4,
        language=language,
        tokenizer=lexer_label(resolve_lexer(language)),
    )
    sset.meta["source"] = origin
    sset.meta["files"] = len(jobs)
    sset.meta["curve"] = sset.meta["curve"][:5000]
    path = os.path.join(OUT, f"sset-{language}.json.gz")
    sset.save(path)
    print(
        f"{language}: {len(jobs)} files, {sset.tokens:,} tokens, k={k} -> {path} "
        f"({os.path.getsize(path):,} bytes, {time.perf_counter() - started:.1f} s)"
    )


def _default_jdk_src() -> str:
    import glob

    for candidate in sorted(glob.glob("/usr/lib/jvm/*/lib/src.zip")):
        if os.path.exists(candidate):
            return candidate
    return ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python-stdlib", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--jdk-src", default=_default_jdk_src())
    parser.add_argument("-k", type=int, default=1000)
    args = parser.parse_args()
    import sys

    build(
        python_files(args.python_stdlib),
        "python",
        args.k,
        f"CPython {sys.version.split()[0]} standard library (no tests)",
    )
    if os.path.exists(args.jdk_src):
        build(java_files(args.jdk_src), "java", args.k, f"JDK class library ({args.jdk_src})")


if __name__ == "__main__":
    main()

"""The inputs of the metric measurements: token streams of the labeled sets (cached), sampled
pairs, the reference packages' functions."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchlib.corpus import dataset_path

from metricbench.plan import EPSILON, K


def _source_fingerprint() -> str:
    import pygments

    import crystal_lsp

    h = hashlib.sha256()
    h.update(f"{crystal_lsp.__version__}|{pygments.__version__}|k={K}".encode())
    package = Path(crystal_lsp.__file__).resolve().parent
    # everything that tokenizes or counts: the text and metric layers (fastlex included)
    for path in sorted(package.glob("text/**/*.py")) + sorted(package.glob("metric/*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def cache_dir_for(cache_root: str, data: str, name: str) -> str:
    st = os.stat(dataset_path(data, name))
    key = hashlib.sha256(
        f"{os.path.abspath(dataset_path(data, name))}|{st.st_size}|{st.st_mtime_ns}|"
        f"{_source_fingerprint()}".encode()
    ).hexdigest()[:12]
    return os.path.join(cache_root, f"{name}-{key}")


def prepare_set(spec: dict[str, Any]) -> dict[str, Any]:
    """Tokenize a whole data set (all CPUs), build S from its train split, store both."""
    from crystal_lsp.metric.datasets import load_items
    from crystal_lsp.metric.sset import build_sset
    from crystal_lsp.text.lexers import canonical_name, lexer_label, resolve_lexer
    from crystal_lsp.text.parallel import tokenize_many

    target = spec["cache_dir"]
    if os.path.exists(os.path.join(target, "meta.json")):
        return {"cached": True}
    items = load_items(spec["dataset"])
    lexer = resolve_lexer(items[0].lang)
    language = canonical_name(lexer)
    t0 = time.perf_counter()
    streams = tokenize_many([(it.id, it.code, language) for it in items])
    tokenize_s = time.perf_counter() - t0
    tmp = f"{target}.tmp-{os.getpid()}"
    os.makedirs(tmp, exist_ok=True)
    offsets = [0]
    with open(os.path.join(tmp, "tokens.bin"), "wb") as fh:
        for tokens in streams:
            blob = pickle.dumps(tokens.texts, protocol=pickle.HIGHEST_PROTOCOL)
            fh.write(blob)
            offsets.append(offsets[-1] + len(blob))
    train = [s.texts for s, it in zip(streams, items) if it.split == "train"]
    sset = build_sset(train, K, language=language, tokenizer=lexer_label(lexer))
    sset.save(os.path.join(tmp, "sset.json.gz"))
    meta = {
        "set": spec["set"],
        "language": language,
        "classes": [it.cls for it in items],
        "splits": [it.split for it in items],
        "code_bytes": [len(it.code.encode()) for it in items],
        "tokens": [len(s) for s in streams],
        "offsets": offsets,
        "tokenize_s": tokenize_s,
    }
    with open(os.path.join(tmp, "meta.json"), "w") as fh:
        json.dump(meta, fh)
    os.replace(tmp, target)
    return {"cached": False, "tokenize_s": tokenize_s, "items": len(items)}


class TokenCache:
    """Read access to a prepared data set."""

    def __init__(self, cache_dir: str) -> None:
        self.dir = cache_dir
        with open(os.path.join(cache_dir, "meta.json")) as fh:
            self.meta = json.load(fh)
        self.classes: list[str] = self.meta["classes"]
        self.splits: list[str] = self.meta["splits"]

    def indices(self, split: str | None) -> list[int]:
        return [i for i, s in enumerate(self.splits) if split is None or s == split]

    def load(self, indices: Iterable[int]) -> dict[int, list[str]]:
        offsets = self.meta["offsets"]
        out: dict[int, list[str]] = {}
        with open(os.path.join(self.dir, "tokens.bin"), "rb") as fh:
            for i in sorted(set(indices)):
                fh.seek(offsets[i])
                out[i] = pickle.loads(fh.read(offsets[i + 1] - offsets[i]))
        return out

    def sset(self) -> Any:
        from crystal_lsp.metric.sset import TriviallySharedSet

        return TriviallySharedSet.load(os.path.join(self.dir, "sset.json.gz"))


def _pairs(cache: TokenCache, n: int, seed: int) -> tuple[list[tuple[int, tuple[int, ...]]], Any]:
    from crystal_lsp.metric.sampling import sample_pairs

    sets = sample_pairs(cache.classes, cache.indices("test"), n, seed)
    return sets.intra + sets.inter, sets


def _scoring_inputs(spec: dict[str, Any]) -> tuple[list[Any], list[Any], Any, dict[str, Any]]:
    """(hypotheses, reference lists, S or None, info) for the sampled test pairs of a set."""
    cache = TokenCache(spec["cache_dir"])
    pairs, _ = _pairs(cache, spec["n"], spec["seed"])
    used = [h for h, _ in pairs] + [r for _, refs in pairs for r in refs]
    tokens = cache.load(used)
    hyps = [tokens[h] for h, _ in pairs]
    refs = [[tokens[r] for r in rs] for _, rs in pairs]
    sset = cache.sset() if spec["metric"] == "crystalbleu" else None
    info = {
        "pairs": len(pairs),
        "sequence_slots": len(used),
        "distinct_sequences": len(set(used)),
        "mean_tokens": sum(len(tokens[i]) for i in used) / len(used),
        "distinct_tokens": sum(len(tokens[i]) for i in set(used)),
    }
    return hyps, refs, sset, info


def _reference_functions(metric: str) -> tuple[Any, Any, Any]:
    """(sentence_bleu, corpus_bleu, smoothing function) of the reference package."""
    if metric == "crystalbleu":
        import crystalbleu

        smooth = crystalbleu.SmoothingFunction(epsilon=EPSILON).method1
        return crystalbleu.sentence_bleu, crystalbleu.corpus_bleu, smooth
    from nltk.translate import bleu_score

    smooth = bleu_score.SmoothingFunction(epsilon=EPSILON).method1
    return bleu_score.sentence_bleu, bleu_score.corpus_bleu, smooth


def _code_sample(path: str, max_bytes: int) -> list[tuple[str, str]]:
    """(id, code) of the data set's items in file order, up to ``max_bytes`` of UTF-8."""
    from crystal_lsp.metric.datasets import iter_items

    out: list[tuple[str, str]] = []
    total = 0
    for item in iter_items(path):
        out.append((item.id, item.code))
        total += len(item.code.encode())
        if total >= max_bytes:
            break
    return out

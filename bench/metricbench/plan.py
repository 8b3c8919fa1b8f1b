"""What a metric benchmark run measures (full or ``--quick``), and its goals."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


ROOT = HERE.parent


ALL_SETS = ("gcj_java", "clcdsa_atcoder_python", "clcdsa_atcoder_java")


K = 500


EPSILON = 1e-4


SENTENCE_GOAL = 20.0


SSET_GOAL = 10.0


TOKENIZE_GOAL = 0.9


SCALING_GOAL = 1.5  # speedup with 2 processes over 1 that we call "scales with cores"


EXACT_TOLERANCE = 1e-12


SECTIONS = ("sentence", "corpus", "sset", "tokenize", "disting")


@dataclass
class Plan:
    """What one run measures."""

    name: str
    score_sets: list[str]
    n_pairs: int
    corpus_repeats: int
    corpus_ref_repeats: int
    sset_set: str
    tokenize: list[tuple[str, str, int]]  # (language, data set, bytes of code to tokenize)
    tokenize_passes: int
    disting: list[dict[str, Any]] = field(default_factory=list)


def make_plan(quick: bool) -> Plan:
    if quick:
        return Plan(
            name="quick",
            score_sets=["gcj_java"],
            n_pairs=200,
            corpus_repeats=3,
            corpus_ref_repeats=1,
            sset_set="gcj_java",
            tokenize=[("java", "gcj_java", 300_000), ("python", "clcdsa_atcoder_python", 150_000)],
            tokenize_passes=3,
            disting=[{"set": "gcj_java", "seed": 0, "protocol": "pairs", "aggregate": "mean"}],
        )
    disting: list[dict[str, Any]] = []
    for name in ALL_SETS:
        for seed in (0, 1, 2):
            disting.append({"set": name, "seed": seed, "protocol": "pairs", "aggregate": "mean"})
        # gcj_java classes have up to 478 programs: a classwise pair merges hundreds of reference
        # profiles (~190 CPU s at n = 1000), so that one row uses n = 200.
        disting.append(
            {
                "set": name,
                "seed": 0,
                "protocol": "classwise",
                "aggregate": "mean",
                "n": 200 if name == "gcj_java" else 1000,
            }
        )
        disting.append({"set": name, "seed": 0, "protocol": "pairs", "aggregate": "corpus"})
    return Plan(
        name="full",
        score_sets=list(ALL_SETS),
        n_pairs=1000,
        corpus_repeats=3,
        corpus_ref_repeats=2,
        sset_set="clcdsa_atcoder_java",
        tokenize=[
            ("java", "clcdsa_atcoder_java", 4_000_000),
            ("python", "clcdsa_atcoder_python", 2_000_000),
        ],
        tokenize_passes=2,
        disting=disting,
    )

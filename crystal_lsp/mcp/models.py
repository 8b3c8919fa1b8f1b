"""The structured results of the MCP tools: their output schemas, checked by the SDK.

Every result also carries a short text for the agent (the MCP ``content``); the models here are
the ``structuredContent`` and, through pydantic, each tool's ``outputSchema``. Lines are 1-based
and inclusive. Lists that are capped say how many items were left out (``omitted``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Place(BaseModel):
    """A region of a file: path, lines and what it is part of."""

    path: str
    start_line: int
    end_line: int
    what: str = Field(description="function name, lines 3-20 of class Foo, file, ...")


class Duplicate(BaseModel):
    """Code of the repository that the checked snippet repeats."""

    original: Place
    snippet_start_line: int = Field(description="first line of your code that matches (1-based)")
    snippet_end_line: int = Field(description="last line of your code that matches")
    similarity: float = Field(
        description="how similar, 0 to 1: CrystalBLEU with names and literals abstracted, so "
        "that a renamed copy scores high (what the threshold is compared with)"
    )
    crystalbleu: float = Field(description="CrystalBLEU of the exact tokens (lower when renamed)")
    type: str = Field(
        description="exact (the same code), renamed (the same but for names and literals) or "
        "near (edited)"
    )
    copied_tokens: int = Field(description="tokens of distinctive code both contain")
    shared_ngrams: list[list[str]] = Field(
        description="token sequences both contain that are not boilerplate of the language: "
        "the evidence"
    )
    other_copies: int = Field(description="further copies of the same code in the repository")


class CheckResult(BaseModel):
    """``check_duplication``: what the snippet repeats, and what to do about it."""

    language: str
    language_guessed: bool = Field(
        default=False, description="no language or path was given: the language is a guess"
    )
    tokens: int
    duplicates: list[Duplicate]
    omitted: int = 0
    advice: str = Field(description="what to do, in one sentence")
    threshold: float = Field(description="the similarity from which code counts as a copy")
    signature: str = Field(description="the settings behind the numbers (equal: comparable)")
    indexed_files: int


class OrderStats(BaseModel):
    """Modified n-gram precision of one order: matches over hypothesis n-grams."""

    n: int
    bleu_matches: float
    bleu_total: float
    crystalbleu_matches: float
    crystalbleu_total: float


class ReferenceScore(BaseModel):
    """The scores against one reference alone."""

    label: str
    bleu: float
    crystalbleu: float


class ScoreResult(BaseModel):
    """``score``: BLEU and CrystalBLEU of code against references."""

    language: str
    bleu: float
    crystalbleu: float
    ruby: float | None = None
    orders: list[OrderStats]
    hypothesis_length: int
    reference_length: int = Field(description="closest reference length (brevity penalty)")
    references: list[ReferenceScore]
    signatures: dict[str, str]
    notes: list[str] = Field(default_factory=list)


class CloneMember(BaseModel):
    """One copy of a clone class."""

    place: Place
    similarity: float | None = Field(description="to the representative (None: it is it)")


class CloneClass(BaseModel):
    """A group of copies of one piece of code (a clone class), compact."""

    id: str = Field(description="stable across commits while the copies stay")
    type: str = Field(description="exact, renamed or near (edited)")
    language: str
    score: float = Field(description="lowest similarity of a copy to the first one listed")
    copied_tokens: int = Field(description="distinctive tokens copied, over all copies")
    members: list[CloneMember]
    omitted_members: int = 0


class FileClonesResult(BaseModel):
    """``file_clones``: the clone classes with a copy in one file."""

    path: str
    classes: list[CloneClass]
    omitted: int = 0
    signature: str


class ScanSummary(BaseModel):
    """The counts of a scan."""

    files: int
    snippets: int
    findings: int
    skipped_files: int
    filtered: dict[str, int]
    cached: bool
    signature: str


class ScanToolResult(BaseModel):
    """``scan``: the summary and the top findings."""

    summary: ScanSummary
    top: list[CloneClass]
    omitted: int = 0
    new_since: str | None = None


class TrivialNgram(BaseModel):
    """A member of S with its count in the corpus it was built from."""

    ngram: list[str]
    count: int


class TriviallySharedResult(BaseModel):
    """``trivially_shared``: the n-grams CrystalBLEU ignores for a language."""

    language: str
    source: str = Field(
        description="index (counted in this repository), built-in, or none (no code of the "
        "language here and no built-in list)"
    )
    k: int
    size: int
    fingerprint: str
    ngrams: list[TrivialNgram]
    omitted: int = 0

/**
 * The server's custom protocol (see crystal_lsp/server): the `crystal/score` and
 * `crystal/insertions` requests, the `crystal.*` commands and the `crystal/status` notification.
 * Plain data types, no VS Code.
 */

export interface Position {
    line: number;
    character: number;
}

export interface Range {
    start: Position;
    end: Position;
}

/** A piece of code to score: literal text, or (part of) a document the server can read. */
export type CodeRef = { text: string } | { uri: string; range?: Range };

/** Metrics the score command may ask for next to BLEU and CrystalBLEU. */
export const EXTRA_METRICS = ['ruby', 'sts', 'trs', 'grs', 'crystalbleu-if'] as const;

export interface ScoreParams {
    metrics?: string[];
    hypothesis: CodeRef;
    /** `"auto"`: the best matches in the workspace index. */
    references: CodeRef[] | 'auto';
    language?: string;
}

export interface ScoreSignature {
    bleu: string;
    crystalbleu: string;
}

export interface ReferenceScore {
    uri?: string;
    range?: Range;
    label: string;
    bleu: number;
    crystalbleu: number;
}

export interface ReferenceRange {
    uri?: string;
    /** Index into {@link ScoreResult.references}. */
    index: number;
    range: Range;
}

export interface NgramMatch {
    ngram: string[];
    hypothesisRanges: Range[];
    referenceRanges: ReferenceRange[];
}

/** A score's sufficient statistics (per order: clipped matches and hypothesis n-grams). */
export interface ScoreStatistics {
    score: number;
    matches: number[];
    totals: number[];
    precisions: number[];
    brevityPenalty: number;
    ratio: number;
    hypLen: number;
    refLen: number;
}

/** How references were searched: a scope, regions aligned, and regions left out by reason. */
export interface ReferenceSearch {
    within: string;
    aligned: number;
    leftOut: { reason: string; count: number }[];
}

export interface ScoreResult {
    language: string;
    bleu: number;
    crystalbleu: number;
    statistics?: { bleu?: ScoreStatistics; crystalbleu?: ScoreStatistics };
    referenceSearch?: ReferenceSearch[];
    signature: ScoreSignature;
    references: ReferenceScore[];
    matches: NgramMatch[];
}

export interface TrivialNgramsResult {
    language: string;
    k: number | string;
    fingerprint: string;
    ngrams: { ngram: string[]; count: number }[];
}

export interface RebuildResult {
    files: number;
    seconds: number;
}

export type ServerState = 'indexing' | 'ready' | 'error';

export interface StatusParams {
    state: ServerState;
    message?: string;
    files?: number;
}

/** One side of `crystal.compare`: a range of a document (the server answers with its text). */
export interface CompareSide {
    uri: string;
    range: Range;
    label: string;
    text?: string;
    truncated?: boolean;
}

/** The argument of `crystal.compare` (code lenses of inserted blocks, the compare quick fix). */
export interface CompareRanges {
    title?: string;
    left: CompareSide;
    right: CompareSide;
    /** false: the server only answers the texts (it shows the left side otherwise). */
    goTo?: boolean;
}

/**
 * The argument of the hover's `compare` link, a trusted command link: only an opaque id the server
 * minted for the pair it showed (it looks the ranges up), never a path a file name could forge.
 */
export interface CompareId {
    id: string;
    goTo?: boolean;
}

export type CompareSpec = CompareRanges | CompareId;

export interface CompareResult {
    title: string;
    left: Required<CompareSide>;
    /** `mapped`: the copy's text with its renamed names turned back into the original's. */
    right: Required<CompareSide> & { mapped?: string };
    /** `[original's name, copy's name]` of each name the copy renamed (older servers: absent). */
    renaming?: [string, string][];
    /** Comment lines listing the renaming, shown above both sides ('' when nothing was renamed). */
    header?: string;
}

/** A block that landed in one edit this session (`crystal/insertions`). */
export interface Insertion {
    id: number;
    time: string;
    uri: string;
    path: string;
    range: Range;
    lines: number;
    tokens: number;
    language: string;
    verdict: 'copy' | 'new' | 'unscored';
    kind: 'exact' | 'renamed' | 'near' | null;
    similarity: number | null;
    crystalbleu: number;
    bleu: number;
    closest: ReferenceScore | null;
    references: string[];
    latencyMs: number | null;
    state: 'pending' | 'shown' | 'edited' | 'expired' | 'closed';
    note?: string;
}

export interface InsertionSummary {
    landed: number;
    copies: number;
    new: number;
    unscored: number;
    kinds: Record<string, number>;
    dropped: number;
}

export interface InsertionsResult {
    insertions: Insertion[];
    summary: InsertionSummary;
}

export interface InsertionsExport {
    jsonl: string;
    count: number;
    withoutReferences: number;
    summary: InsertionSummary;
}

/** Method and command names. Our own palette commands use the `crystalLsp.` prefix instead. */
export const SCORE_REQUEST = 'crystal/score';
export const STATUS_NOTIFICATION = 'crystal/status';
export const CMD_SCORE_SELECTION = 'crystal.scoreSelection';
export const CMD_SCORE_TEXT = 'crystal.scoreText';
export const CMD_TRIVIAL_NGRAMS = 'crystal.showTrivialNgrams';
export const CMD_REBUILD_INDEX = 'crystal.rebuildIndex';
export const CMD_COMPARE = 'crystal.compare';
export const INSERTIONS_REQUEST = 'crystal/insertions';

export const DIAGNOSTIC_SOURCE = 'crystal';
export const DIAGNOSTIC_CODE = 'near-duplicate';

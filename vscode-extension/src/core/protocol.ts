/**
 * The server's custom protocol (see crystal_lsp/server): the `crystal/score` request, the
 * `crystal.*` commands and the `crystal/status` notification. Plain data types, no VS Code.
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

/** Method and command names. Our own palette commands use the `crystalLsp.` prefix instead. */
export const SCORE_REQUEST = 'crystal/score';
export const STATUS_NOTIFICATION = 'crystal/status';
export const CMD_SCORE_SELECTION = 'crystal.scoreSelection';
export const CMD_SCORE_TEXT = 'crystal.scoreText';
export const CMD_TRIVIAL_NGRAMS = 'crystal.showTrivialNgrams';
export const CMD_REBUILD_INDEX = 'crystal.rebuildIndex';

export const DIAGNOSTIC_SOURCE = 'crystal';
export const DIAGNOSTIC_CODE = 'near-duplicate';

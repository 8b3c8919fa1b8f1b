/**
 * From a `crystal/score` result to editor highlights: per document, the spans covered by matched
 * (non-trivial) n-grams, overlapping and touching ranges merged so that overlapping 4-gram
 * windows become one contiguous highlight, each span remembering which n-grams it carries.
 */
import type { NgramMatch, Position, Range, ScoreResult } from './protocol';

export interface Span {
    range: Range;
    /** Distinct n-grams (joined by spaces) that cover the span, in first-seen order. */
    ngrams: string[];
}

export interface Highlights {
    /** Spans in the scored document (the hypothesis). */
    hypothesis: Span[];
    /** Spans in reference documents, keyed by URI (references given as text have none). */
    references: Map<string, Span[]>;
    /** Number of distinct matched n-grams. */
    ngramCount: number;
}

export function comparePositions(a: Position, b: Position): number {
    return a.line - b.line || a.character - b.character;
}

function isEmpty(r: Range): boolean {
    return comparePositions(r.start, r.end) >= 0;
}

/** Sorts and merges ranges that overlap or touch; drops empty ones. */
export function mergeSpans(spans: readonly Span[]): Span[] {
    const sorted = spans
        .filter((s) => !isEmpty(s.range))
        .slice()
        .sort((a, b) => comparePositions(a.range.start, b.range.start) || comparePositions(a.range.end, b.range.end));
    const out: Span[] = [];
    for (const s of sorted) {
        const last = out[out.length - 1];
        if (last && comparePositions(s.range.start, last.range.end) <= 0) {
            if (comparePositions(s.range.end, last.range.end) > 0) {
                last.range = { start: last.range.start, end: s.range.end };
            }
            for (const g of s.ngrams) {
                if (!last.ngrams.includes(g)) {
                    last.ngrams.push(g);
                }
            }
        } else {
            out.push({ range: { start: { ...s.range.start }, end: { ...s.range.end } }, ngrams: [...s.ngrams] });
        }
    }
    return out;
}

export function ngramText(ngram: readonly string[]): string {
    return ngram.join(' ');
}

export function computeHighlights(result: Pick<ScoreResult, 'matches' | 'references'>): Highlights {
    const hyp: Span[] = [];
    const refs = new Map<string, Span[]>();
    const distinct = new Set<string>();
    for (const m of result.matches as NgramMatch[]) {
        const text = ngramText(m.ngram);
        distinct.add(text);
        for (const r of m.hypothesisRanges) {
            hyp.push({ range: r, ngrams: [text] });
        }
        for (const rr of m.referenceRanges) {
            const uri = rr.uri ?? result.references[rr.index]?.uri;
            if (!uri) {
                continue;
            }
            let list = refs.get(uri);
            if (!list) {
                list = [];
                refs.set(uri, list);
            }
            list.push({ range: rr.range, ngrams: [text] });
        }
    }
    const merged = new Map<string, Span[]>();
    for (const [uri, spans] of refs) {
        merged.set(uri, mergeSpans(spans));
    }
    return { hypothesis: mergeSpans(hyp), references: merged, ngramCount: distinct.size };
}

/** Hover text of a highlight: the n-grams it carries, at most `limit` of them. */
export function spanHoverMarkdown(span: Span, limit = 6): string {
    const shown = span.ngrams.slice(0, limit).map((g) => `\`${g.replace(/`/g, "'")}\``);
    const more = span.ngrams.length - shown.length;
    const tail = more > 0 ? `, and ${more} more` : '';
    return `**CrystalBLEU match** (not trivially shared): ${shown.join(', ')}${tail}`;
}

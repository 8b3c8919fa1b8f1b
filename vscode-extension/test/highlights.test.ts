import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeHighlights, mergeSpans, spanHoverMarkdown } from '../src/core/highlights';
import type { Range, ScoreResult } from '../src/core/protocol';

const r = (l1: number, c1: number, l2: number, c2: number): Range => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

test('overlapping and touching spans merge, n-grams are unioned in order', () => {
    const merged = mergeSpans([
        { range: r(0, 4, 0, 10), ngrams: ['b'] },
        { range: r(0, 0, 0, 6), ngrams: ['a'] },
        { range: r(0, 10, 1, 2), ngrams: ['c', 'a'] },
        { range: r(3, 0, 3, 5), ngrams: ['d'] },
    ]);
    assert.deepEqual(merged, [
        { range: r(0, 0, 1, 2), ngrams: ['a', 'b', 'c'] },
        { range: r(3, 0, 3, 5), ngrams: ['d'] },
    ]);
});

test('contained spans do not shrink the container; empty ranges are dropped', () => {
    const merged = mergeSpans([
        { range: r(2, 0, 5, 0), ngrams: ['outer'] },
        { range: r(3, 1, 3, 4), ngrams: ['inner'] },
        { range: r(7, 3, 7, 3), ngrams: ['empty'] },
    ]);
    assert.deepEqual(merged, [{ range: r(2, 0, 5, 0), ngrams: ['outer', 'inner'] }]);
});

test('merging does not mutate its input', () => {
    const input = [
        { range: r(0, 0, 0, 5), ngrams: ['a'] },
        { range: r(0, 3, 0, 8), ngrams: ['b'] },
    ];
    const copy = JSON.parse(JSON.stringify(input));
    mergeSpans(input);
    assert.deepEqual(input, copy);
});

test('score result → hypothesis and per-reference highlights', () => {
    const result: Pick<ScoreResult, 'matches' | 'references'> = {
        references: [
            { uri: 'file:///ws/a.py', label: 'a.py', bleu: 0.9, crystalbleu: 0.8 },
            { label: 'clipboard', bleu: 0.1, crystalbleu: 0.05 },
        ],
        matches: [
            {
                ngram: ['total', '=', 'total', '+'],
                hypothesisRanges: [r(4, 8, 4, 27)],
                referenceRanges: [
                    { index: 0, range: r(10, 8, 10, 27) },
                    { index: 1, range: r(0, 0, 0, 10) },
                ],
            },
            {
                ngram: ['=', 'total', '+', 'x'],
                hypothesisRanges: [r(4, 14, 4, 31)],
                referenceRanges: [{ uri: 'file:///ws/b.py', index: 0, range: r(1, 0, 1, 5) }],
            },
        ],
    };
    const h = computeHighlights(result);
    assert.equal(h.ngramCount, 2);
    assert.deepEqual(h.hypothesis, [{ range: r(4, 8, 4, 31), ngrams: ['total = total +', '= total + x'] }]);
    assert.deepEqual([...h.references.keys()].sort(), ['file:///ws/a.py', 'file:///ws/b.py']);
    assert.deepEqual(h.references.get('file:///ws/a.py'), [{ range: r(10, 8, 10, 27), ngrams: ['total = total +'] }]);
});

test('no matches, no highlights', () => {
    const h = computeHighlights({ matches: [], references: [] });
    assert.deepEqual(h.hypothesis, []);
    assert.equal(h.references.size, 0);
    assert.equal(h.ngramCount, 0);
});

test('hover text lists a bounded number of n-grams', () => {
    const md = spanHoverMarkdown({ range: r(0, 0, 0, 1), ngrams: ['a', 'b', 'c', 'd`x'] }, 3);
    assert.match(md, /`a`, `b`, `c`, and 1 more/);
    assert.equal(spanHoverMarkdown({ range: r(0, 0, 0, 1), ngrams: ["x`y"] }).includes("`x'y`"), true);
});

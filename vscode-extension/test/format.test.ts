import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
    baseName,
    bestReference,
    formatRange,
    formatScore,
    insertionsMarkdown,
    mdText,
    scoreReportMarkdown,
    scoreSummary,
    trivialNgramsMarkdown,
} from '../src/core/format';
import type { Insertion, InsertionsResult, ScoreResult } from '../src/core/protocol';

const result: ScoreResult = {
    language: 'python',
    bleu: 0.91234,
    crystalbleu: 0.73456,
    signature: { bleu: 'bleu|tok:pygments|lang:python', crystalbleu: 'crystalbleu|tok:pygments|lang:python|k:500' },
    references: [
        { uri: 'file:///ws/a.py', label: 'a.py:3-20', bleu: 0.5, crystalbleu: 0.4 },
        { uri: 'file:///ws/b.py', label: 'b.py:1-9', bleu: 0.91234, crystalbleu: 0.73456 },
    ],
    matches: [
        { ngram: ['for', 'x', 'in', 'xs'], hypothesisRanges: [{ start: { line: 2, character: 0 }, end: { line: 2, character: 12 } }], referenceRanges: [] },
        { ngram: ['a|b'], hypothesisRanges: [], referenceRanges: [] },
    ],
};

test('scores are shown with three decimals', () => {
    assert.equal(formatScore(0.73456), '0.735');
    assert.equal(formatScore(1), '1.000');
    assert.equal(formatScore(Number.NaN), 'n/a');
});

test('summary line names the best reference', () => {
    assert.equal(scoreSummary(result), 'CrystalBLEU 0.735 · BLEU 0.912 against 2 references (best: b.py:1-9)');
    assert.equal(scoreSummary({ ...result, references: [result.references[0]] }), 'CrystalBLEU 0.735 · BLEU 0.912 against a.py:3-20');
    assert.equal(scoreSummary({ ...result, references: [] }), 'CrystalBLEU 0.735 · BLEU 0.912 against no reference');
    assert.equal(bestReference(result)?.label, 'b.py:1-9');
});

test('report has scores, references sorted by CrystalBLEU, signatures and n-grams', () => {
    const md = scoreReportMarkdown(result, 'c.py:5-9');
    assert.match(md, /^# CrystalBLEU score of c\.py:5-9/);
    assert.match(md, /\| CrystalBLEU \| 0\.735 \|/);
    assert.ok(md.indexOf('b\\.py\\:1\\-9') < md.indexOf('a\\.py\\:3\\-20') && md.includes('a\\.py'));
    assert.match(md, /crystalbleu: crystalbleu\|tok:pygments\|lang:python\|k:500/);
    assert.match(md, /- `for x in xs` \(line 3\)/);
    assert.match(md, /`a\\\|b`/);
    assert.match(md, /Matched non-trivial n-grams: 2\./);
});

test('line ranges are 1-based and a selection ending at column 0 excludes that line', () => {
    assert.equal(formatRange(undefined), '');
    assert.equal(formatRange({ start: { line: 4, character: 0 }, end: { line: 9, character: 0 } }), ':5-9');
    assert.equal(formatRange({ start: { line: 4, character: 2 }, end: { line: 4, character: 9 } }), ':5');
    assert.equal(formatRange({ start: { line: 4, character: 2 }, end: { line: 6, character: 1 } }), ':5-7');
});

test('base names of URIs and paths', () => {
    assert.equal(baseName('file:///ws/dir/my%20file.py'), 'my file.py');
    assert.equal(baseName('C:\\x\\y.py'), 'y.py');
    assert.equal(baseName('/a/b/'), 'b');
});

test('trivially shared n-gram table', () => {
    const md = trivialNgramsMarkdown({
        language: 'python',
        k: 500,
        fingerprint: '6a4c384bf7fe',
        ngrams: [
            { ngram: ['(', ')'], count: 120 },
            { ngram: [')', ':'], count: 99 },
        ],
    });
    assert.match(md, /k = 500, S fingerprint `6a4c384bf7fe`/);
    assert.match(md, /\| 1 \| 120 \| 2 \| `\( \)` \|/);
    assert.match(md, /\| 2 \| 99 \| 2 \| `\) :` \|/);
    assert.match(trivialNgramsMarkdown({ language: 'go', k: 'auto', fingerprint: 'x', ngrams: [] }), /none: the index has no files/);
});

test('the report shows per-order statistics and how references were found', () => {
    const stats = { score: 0.5, matches: [9, 6, 4, 2], totals: [10, 9, 8, 7], precisions: [0.9, 6 / 9, 0.5, 2 / 7], brevityPenalty: 1, ratio: 1.1, hypLen: 11, refLen: 10 };
    const md = scoreReportMarkdown(
        { ...result, statistics: { bleu: stats, crystalbleu: stats }, referenceSearch: [{ within: 'workspace', aligned: 12, leftOut: [{ reason: 'zero score', count: 5 }] }] },
        'sel',
    );
    assert.match(md, /## Statistics/);
    assert.match(md, /\| CrystalBLEU \| 2 \| 6 \/ 9 \| 0\.667 \|/);
    assert.match(md, /brevity penalty 1\.000, hypothesis 11 tokens, reference 10/);
    assert.match(md, /best-matching regions of the workspace \(12 aligned; left out: 5 zero score\)/);
    assert.doesNotMatch(scoreReportMarkdown(result, 'sel'), /## Statistics/);
});

test('the report lists further metrics such as RUBY', () => {
    const md = scoreReportMarkdown({ ...result, ruby: 0.5 } as ScoreResult, 'sel');
    assert.match(md, /\| RUBY \| 0\.500 \|/);
});

const landed = (over: Partial<Insertion>): Insertion => ({
    id: 1,
    time: '2026-11-26T10:04:31.000+00:00',
    uri: 'file:///ws/c.py',
    path: 'c.py',
    range: { start: { line: 13, character: 0 }, end: { line: 27, character: 0 } },
    lines: 14,
    tokens: 120,
    language: 'python',
    verdict: 'copy',
    kind: 'renamed',
    similarity: 1,
    crystalbleu: 0.83,
    bleu: 0.85,
    closest: { uri: 'file:///ws/a.py', label: 'a.py:1-14 (function merge_intervals)', bleu: 0.85, crystalbleu: 0.83 },
    references: ['a.py:1-14 (function merge_intervals)'],
    latencyMs: 52,
    state: 'shown',
    ...over,
});

test('the insertions report counts copies and lists each block', () => {
    const result: InsertionsResult = {
        insertions: [landed({}), landed({ id: 2, verdict: 'new', kind: null, similarity: 0.21, crystalbleu: 0.1, closest: null, note: undefined })],
        summary: { landed: 2, copies: 1, new: 1, unscored: 0, kinds: { renamed: 1 }, dropped: 0 },
    };
    const md = insertionsMarkdown(result);
    assert.match(md, /^# Inserted code \(this session\)\n\n2 blocks landed: 1 repeat code the workspace already has \(50 % of those scored\) \(1 renamed\), 1 new\.\n/);
    const rows = md.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| when') && !l.startsWith('| ---'));
    assert.equal(rows.length, 2);
    assert.ok(rows[0].endsWith(' | c\\.py:14-27 | 14 | renamed copy | 1.000 | 0.830 | a\\.py\\:1\\-14 \\(function merge\\_intervals\\) |'), rows[0]);
    assert.match(rows[1], /\| new code \| 0\.210 \| 0\.100 \|  \|$/);
    assert.match(insertionsMarkdown({ insertions: [], summary: { ...result.summary, landed: 0 } }), /Nothing has landed yet/);
});

test('names from the repository are Markdown that shows them and nothing else', () => {
    const hostile = '[click](command:crystal.compare?%5B%5D) ![x](https://e.test/p.png) <img src=x> *_`|';
    const escaped = mdText(hostile);
    assert.equal(escaped.replace(/\\(.)/g, '$1'), hostile);
    assert.ok(!/(^|[^\\])[[\]()!<>*_`|]/.test(escaped), escaped);
    const md = insertionsMarkdown({
        insertions: [landed({ path: `${hostile}.py`, closest: { uri: 'file:///ws/x.py', label: hostile, bleu: 1, crystalbleu: 1 } })],
        summary: { landed: 1, copies: 1, new: 0, unscored: 0, kinds: { renamed: 1 }, dropped: 0 },
    });
    assert.ok(!md.includes(hostile) && md.includes(escaped), md);
});

/**
 * Text shown to the user for scores and n-gram lists (notification summary, report documents).
 */
import { computeHighlights, ngramText } from './highlights';
import { EXTRA_METRICS, type InsertionsResult, type Range, type ScoreResult, type TrivialNgramsResult } from './protocol';

export function formatScore(x: number): string {
    if (!Number.isFinite(x)) {
        return 'n/a';
    }
    return x.toFixed(3);
}

export function formatRange(r: Range | undefined): string {
    if (!r) {
        return '';
    }
    const a = r.start.line + 1;
    const b = r.end.character === 0 && r.end.line > r.start.line ? r.end.line : r.end.line + 1;
    return a === b ? `:${a}` : `:${a}-${b}`;
}

/** Last path segment of a URI or path, decoded. */
export function baseName(uriOrPath: string): string {
    const trimmed = uriOrPath.replace(/[/\\]+$/, '');
    const last = trimmed.slice(Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\')) + 1);
    try {
        return decodeURIComponent(last);
    } catch {
        return last;
    }
}

/** One line for a notification: `CrystalBLEU 0.734 · BLEU 0.912 against utils.py:10-30`. */
export function scoreSummary(result: ScoreResult): string {
    const refs = result.references;
    let against: string;
    if (refs.length === 0) {
        against = 'no reference';
    } else if (refs.length === 1) {
        against = refs[0].label;
    } else {
        const best = bestReference(result);
        against = `${refs.length} references (best: ${best?.label ?? '?'})`;
    }
    return `CrystalBLEU ${formatScore(result.crystalbleu)} · BLEU ${formatScore(result.bleu)} against ${against}`;
}

export function bestReference(result: ScoreResult): ScoreResult['references'][number] | undefined {
    let best: ScoreResult['references'][number] | undefined;
    for (const r of result.references) {
        if (!best || r.crystalbleu > best.crystalbleu) {
            best = r;
        }
    }
    return best;
}

function mdCell(s: string): string {
    return s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/**
 * Untrusted text (a name from the repository) as Markdown that shows it and nothing else: every
 * ASCII punctuation character CommonMark knows backslash-escaped, line breaks as spaces. Not for
 * code spans (whose backslashes are shown).
 */
export function mdText(s: string): string {
    return s.replace(/[\r\n]+/g, ' ').replace(/[!-/:-@[-`{-~]/g, (c) => `\\${c}`);
}

/** The report document for a score: scores, per-reference table, signatures, matched n-grams. */
export function scoreReportMarkdown(result: ScoreResult, hypothesisLabel: string, maxNgrams = 40): string {
    const lines: string[] = [];
    const h = computeHighlights(result);
    lines.push(`# CrystalBLEU score of ${hypothesisLabel}`, '');
    lines.push(`| metric | score |`, `| --- | ---: |`);
    lines.push(`| CrystalBLEU | ${formatScore(result.crystalbleu)} |`);
    lines.push(`| BLEU | ${formatScore(result.bleu)} |`);
    for (const name of EXTRA_METRICS) {
        const value = (result as unknown as Record<string, unknown>)[name];
        if (typeof value === 'number') {
            lines.push(`| ${name === 'crystalbleu-if' ? 'CrystalBLEU-IF' : name.toUpperCase()} | ${formatScore(value)} |`);
        }
    }
    lines.push('');
    lines.push(`Language: ${result.language}. Matched non-trivial n-grams: ${h.ngramCount}.`, '');
    lines.push(...statisticsMarkdown(result));
    for (const s of result.referenceSearch ?? []) {
        const left = s.leftOut.map((x) => `${x.count} ${x.reason}`).join(', ');
        const scope = s.within === 'workspace' ? 'the workspace' : `\`${mdCell(s.within)}\``;
        lines.push(`References: the best-matching regions of ${scope} (${s.aligned} aligned${left ? `; left out: ${left}` : ''}).`, '');
    }
    if (result.references.length > 0) {
        lines.push('## References', '', '| reference | CrystalBLEU | BLEU |', '| --- | ---: | ---: |');
        const sorted = [...result.references].sort((a, b) => b.crystalbleu - a.crystalbleu);
        for (const r of sorted) {
            lines.push(`| ${mdText(r.label)} | ${formatScore(r.crystalbleu)} | ${formatScore(r.bleu)} |`);
        }
        lines.push('');
    }
    lines.push('## Signatures', '', 'Two scores are comparable only when their signatures are equal.', '');
    lines.push('```', `crystalbleu: ${result.signature.crystalbleu}`, `bleu:        ${result.signature.bleu}`, '```', '');
    if (result.matches.length > 0) {
        lines.push('## Matched n-grams (trivially shared ones excluded)', '');
        const sorted = [...result.matches].sort((a, b) => b.ngram.length - a.ngram.length || b.hypothesisRanges.length - a.hypothesisRanges.length);
        for (const m of sorted.slice(0, maxNgrams)) {
            const where = m.hypothesisRanges.map((r) => `${r.start.line + 1}`).filter((v, i, a) => a.indexOf(v) === i);
            lines.push(`- \`${mdCell(ngramText(m.ngram)).replace(/`/g, "'")}\` (line${where.length > 1 ? 's' : ''} ${where.join(', ')})`);
        }
        if (sorted.length > maxNgrams) {
            lines.push(`- … and ${sorted.length - maxNgrams} more`);
        }
        lines.push('');
    }
    return lines.join('\n');
}

/** Per-order matches/totals, precisions, brevity penalty and lengths of each metric. */
export function statisticsMarkdown(result: ScoreResult): string[] {
    const stats = result.statistics;
    if (!stats || (!stats.bleu && !stats.crystalbleu)) {
        return [];
    }
    const lines = ['## Statistics', '', '| metric | n | matched / total | precision |', '| --- | ---: | ---: | ---: |'];
    const tail: string[] = [];
    for (const [name, s] of [['CrystalBLEU', stats.crystalbleu], ['BLEU', stats.bleu]] as const) {
        if (!s) {
            continue;
        }
        s.matches.forEach((m, i) => {
            lines.push(`| ${name} | ${i + 1} | ${formatCount(m)} / ${formatCount(s.totals[i])} | ${formatScore(s.precisions[i])} |`);
        });
        tail.push(`${name}: brevity penalty ${formatScore(s.brevityPenalty)}, hypothesis ${s.hypLen} tokens, reference ${s.refLen} (ratio ${formatScore(s.ratio)}).`);
    }
    return [...lines, '', ...tail.flatMap((t) => [t, '']), ];
}

function formatCount(x: number): string {
    return Number.isInteger(x) ? String(x) : x.toFixed(2);
}

export function trivialNgramsMarkdown(result: TrivialNgramsResult): string {
    const lines = [
        `# Trivially shared n-grams: ${result.language}`,
        '',
        `k = ${result.k}, S fingerprint \`${result.fingerprint}\`. CrystalBLEU ignores these n-grams: ` +
            'they are shared by almost any two programs of the language.',
        '',
        '| rank | count | n | n-gram |',
        '| ---: | ---: | ---: | --- |',
    ];
    result.ngrams.forEach((g, i) => {
        lines.push(`| ${i + 1} | ${g.count} | ${g.ngram.length} | \`${mdCell(ngramText(g.ngram)).replace(/`/g, "'")}\` |`);
    });
    if (result.ngrams.length === 0) {
        lines.push('| | | | (none: the index has no files of this language yet) |');
    }
    return lines.join('\n') + '\n';
}

/** `12:04:31` of an ISO time (local time), or the text as given when it does not parse. */
function clock(iso: string): string {
    const t = new Date(iso);
    return Number.isNaN(t.getTime()) ? iso : t.toTimeString().slice(0, 8);
}

/** The verdict of an inserted block in a few words: `renamed copy`, `new code`, `not scored`. */
export function insertionVerdict(i: InsertionsResult['insertions'][number]): string {
    if (i.verdict === 'copy') {
        return `${i.kind ?? 'near'} copy`;
    }
    return i.verdict === 'new' ? 'new code' : 'not scored';
}

/** The report of `Crystal: Show inserted code`: counts, then one row per block that landed. */
export function insertionsMarkdown(result: InsertionsResult): string {
    const s = result.summary;
    const lines = ['# Inserted code (this session)', ''];
    if (s.landed === 0) {
        lines.push('Nothing has landed yet: blocks inserted in one edit (a completion, a paste, an agent\'s edit) show up here once scored.');
        return lines.join('\n') + '\n';
    }
    const share = s.copies + s.new > 0 ? ` (${Math.round((100 * s.copies) / (s.copies + s.new))} % of those scored)` : '';
    const kinds = Object.entries(s.kinds)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ');
    lines.push(
        `${s.landed} ${s.landed === 1 ? 'block' : 'blocks'} landed: ${s.copies} repeat code the workspace already has${share}` +
            `${kinds ? ` (${kinds})` : ''}, ${s.new} new${s.unscored ? `, ${s.unscored} not scored` : ''}.` +
            (s.dropped ? ` ${s.dropped} older entries were dropped from the tally.` : ''),
        '',
        '| when | where | lines | verdict | similarity | CrystalBLEU | closest |',
        '| --- | --- | ---: | --- | ---: | ---: | --- |',
    );
    for (const i of result.insertions) {
        const where = `${mdText(i.path)}${formatRange(i.range)}`;
        const similarity = i.similarity === null ? '' : formatScore(i.similarity);
        const closest = i.closest ? i.closest.label : i.note ?? '';
        lines.push(
            `| ${clock(i.time)} | ${where} | ${i.lines} | ${insertionVerdict(i)} | ${similarity} | ${formatScore(i.crystalbleu)} | ${mdText(closest)} |`,
        );
    }
    lines.push('', '*Crystal: Export inserted code as JSONL…* writes these blocks and their closest regions as items of `crystal-lsp score --jsonl`.');
    return lines.join('\n') + '\n';
}

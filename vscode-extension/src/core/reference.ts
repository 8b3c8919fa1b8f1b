/**
 * Building `crystal/score` parameters from what the user picked.
 */
import type { CodeRef, Range, ScoreParams } from './protocol';

export type ReferenceChoice =
    | { kind: 'workspace' }
    | { kind: 'file'; uri: string; range?: Range }
    | { kind: 'clipboard'; text: string };

export interface Selection {
    uri: string;
    /** The selection; empty (start == end) or absent means the whole document. */
    range?: Range;
    languageId?: string;
}

export function isEmptyRange(r: Range | undefined): boolean {
    return !r || (r.start.line === r.end.line && r.start.character === r.end.character);
}

export function hypothesisRef(sel: Selection): CodeRef {
    return isEmptyRange(sel.range) ? { uri: sel.uri } : { uri: sel.uri, range: sel.range };
}

/** Throws on an empty clipboard: scoring against nothing is a user error worth saying so. */
export function buildScoreParams(sel: Selection, choice: ReferenceChoice, metrics: readonly string[] = []): ScoreParams {
    let references: ScoreParams['references'];
    switch (choice.kind) {
        case 'workspace':
            references = 'auto';
            break;
        case 'file':
            references = [choice.range ? { uri: choice.uri, range: choice.range } : { uri: choice.uri }];
            break;
        case 'clipboard':
            if (!choice.text.trim()) {
                throw new Error('The clipboard is empty: copy the reference code first.');
            }
            references = [{ text: choice.text }];
            break;
    }
    const params: ScoreParams = { hypothesis: hypothesisRef(sel), references };
    if (metrics.length > 0) {
        params.metrics = [...metrics];
    }
    if (sel.languageId && sel.languageId !== 'plaintext') {
        params.language = sel.languageId;
    }
    return params;
}

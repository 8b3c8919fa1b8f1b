import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildScoreParams, hypothesisRef } from '../src/core/reference';

const sel = { start: { line: 1, character: 0 }, end: { line: 8, character: 0 } };
const empty = { start: { line: 3, character: 4 }, end: { line: 3, character: 4 } };

test('the selection is the hypothesis; an empty selection means the whole file', () => {
    assert.deepEqual(hypothesisRef({ uri: 'file:///a.py', range: sel }), { uri: 'file:///a.py', range: sel });
    assert.deepEqual(hypothesisRef({ uri: 'file:///a.py', range: empty }), { uri: 'file:///a.py' });
    assert.deepEqual(hypothesisRef({ uri: 'file:///a.py' }), { uri: 'file:///a.py' });
});

test('reference sources map to the crystal/score parameters', () => {
    const s = { uri: 'file:///a.py', range: sel, languageId: 'python' };
    assert.deepEqual(buildScoreParams(s, { kind: 'workspace' }), {
        hypothesis: { uri: 'file:///a.py', range: sel },
        references: 'auto',
        language: 'python',
    });
    assert.deepEqual(buildScoreParams(s, { kind: 'file', uri: 'file:///b.py' }).references, [{ uri: 'file:///b.py' }]);
    assert.deepEqual(buildScoreParams(s, { kind: 'file', uri: 'file:///b.py', range: sel }).references, [{ uri: 'file:///b.py', range: sel }]);
    assert.deepEqual(buildScoreParams(s, { kind: 'clipboard', text: 'x = 1' }).references, [{ text: 'x = 1' }]);
});

test('an empty clipboard is an error; plaintext sends no language', () => {
    assert.throws(() => buildScoreParams({ uri: 'file:///a.py' }, { kind: 'clipboard', text: '  \n' }), /clipboard is empty/);
    assert.equal('language' in buildScoreParams({ uri: 'untitled:1', languageId: 'plaintext' }, { kind: 'workspace' }), false);
});

test('further metrics (RUBY) are asked for only when configured', () => {
    const sel = { uri: 'file:///ws/a.py', languageId: 'python' };
    assert.equal(buildScoreParams(sel, { kind: 'workspace' }).metrics, undefined);
    assert.deepEqual(buildScoreParams(sel, { kind: 'workspace' }, ['ruby']).metrics, ['ruby']);
});

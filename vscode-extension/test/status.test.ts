import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statusView } from '../src/core/status';

test('indexing shows progress with the file count', () => {
    const v = statusView({ phase: 'running', enabled: true, server: { state: 'indexing', message: 'Indexing 40/120 files', files: 40 } });
    assert.equal(v.text, '$(sync~spin) Crystal: indexing 40 files');
    assert.match(v.tooltip, /Indexing 40\/120 files/);
    assert.equal(statusView({ phase: 'running', enabled: true, server: { state: 'indexing', files: 1 } }).text, '$(sync~spin) Crystal: indexing 1 file');
    assert.equal(statusView({ phase: 'running', enabled: true, server: { state: 'indexing' } }).text, '$(sync~spin) Crystal: indexing');
});

test('ready: number of duplicates in the current file', () => {
    const server = { state: 'ready' as const, files: 12 };
    assert.equal(statusView({ phase: 'running', enabled: true, server, duplicates: 2 }).text, '$(copy) Crystal: 2 duplicates');
    assert.equal(statusView({ phase: 'running', enabled: true, server, duplicates: 1 }).text, '$(copy) Crystal: 1 duplicate');
    assert.equal(statusView({ phase: 'running', enabled: true, server, duplicates: 1 }).kind, 'warning');
    const none = statusView({ phase: 'running', enabled: true, server, duplicates: 0 });
    assert.equal(none.text, '$(check) Crystal: no duplicates');
    assert.match(none.tooltip, /Index: 12 files\./);
    assert.equal(statusView({ phase: 'running', enabled: true, server }).text, '$(check) Crystal');
});

test('disabled, failing, installing and not-installed states', () => {
    assert.equal(statusView({ phase: 'running', enabled: false, server: { state: 'ready' }, duplicates: 3 }).text, '$(circle-slash) Crystal: off');
    const err = statusView({ phase: 'running', enabled: true, server: { state: 'error', message: 'index is corrupt' } });
    assert.equal(err.kind, 'error');
    assert.match(err.tooltip, /index is corrupt/);
    assert.equal(statusView({ phase: 'failed', enabled: true }).kind, 'error');
    assert.equal(statusView({ phase: 'needsInstall', enabled: true }).text, '$(warning) Crystal: not installed');
    assert.equal(statusView({ phase: 'installing', enabled: true }).text, '$(loading~spin) Crystal: installing');
    assert.equal(statusView({ phase: 'starting', enabled: true, detail: 'Python: /x' }).tooltip.split('\n').at(-1), 'Python: /x');
});

test('after a restart, a file not yet checked is not called duplicate-free', () => {
    const fresh = statusView({ phase: 'running', enabled: true, server: { state: 'ready', files: 3 }, duplicates: 0, checked: false });
    assert.equal(fresh.text, '$(check) Crystal');
    assert.match(fresh.tooltip, /not been checked since the server started/);
    const checked = statusView({ phase: 'running', enabled: true, server: { state: 'ready', files: 3 }, duplicates: 0, checked: true });
    assert.equal(checked.text, '$(check) Crystal: no duplicates');
});

test('indexing with no file count yet does not say "0 files"', () => {
    assert.equal(statusView({ phase: 'running', enabled: true, server: { state: 'indexing', files: 0 } }).text, '$(sync~spin) Crystal: indexing');
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StderrClassifier, stripPrefix } from '../src/core/logLevel';

test('levels of common Python logging formats', () => {
    const c = new StderrClassifier();
    assert.equal(c.level('INFO:crystal_lsp.server:indexed 12 files'), 'info');
    assert.equal(c.level('WARNING:crystal_lsp.clones.index:skipping big.py'), 'warn');
    assert.equal(c.level('2026-11-21 07:00:26,367 ERROR crystal_lsp: boom'), 'error');
    assert.equal(c.level('[DEBUG] tokens: 42'), 'debug');
    assert.equal(c.level('crystal_lsp - CRITICAL - out of memory'), 'error');
    assert.equal(c.level('plain line with no level'), 'info');
    assert.equal(c.level('INFORMATION is not a level word'), 'info');
});

test('tracebacks stay at the level of their record', () => {
    const c = new StderrClassifier();
    assert.equal(c.level('ERROR:pygls.protocol:Exception occurred for message "6"'), 'error');
    assert.equal(c.level('Traceback (most recent call last):'), 'error');
    assert.equal(c.level('  File "x.py", line 3, in f'), 'error');
    assert.equal(c.level('KeyError: \'hypothesis\''), 'error');
    assert.equal(c.level('INFO:stub:ok again'), 'info');
    assert.equal(c.level('    indented continuation'), 'info');
});

test("the server's timestamp and level prefix is dropped (the channel has its own)", () => {
    assert.equal(stripPrefix('2026-11-21 07:32:00,261 INFO crystal_lsp.server.app: indexed 2 files'), 'crystal_lsp.server.app: indexed 2 files');
    assert.equal(stripPrefix('2026-11-21T07:32:00.261 WARNING x: y'), 'x: y');
    assert.equal(stripPrefix('INFO:stub:ok'), 'INFO:stub:ok');
    assert.equal(stripPrefix('  File "x.py", line 3'), '  File "x.py", line 3');
});

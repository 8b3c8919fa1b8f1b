import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportQuestion, isInside } from '../src/core/exportTarget';

test('a new file inside a workspace folder is written without asking', () => {
    assert.equal(exportQuestion('/ws/insertions.jsonl', ['/ws'], false), undefined);
    assert.equal(exportQuestion('/ws/sub/x.jsonl', ['/other', '/ws'], false), undefined);
});

test('outside the workspace, or over an existing file, the user is asked', () => {
    assert.match(exportQuestion('/etc/cron.d/x', ['/ws'], false) ?? '', /outside the workspace/);
    assert.match(exportQuestion('/ws/../home/.bashrc', ['/ws'], true) ?? '', /^Overwrite .*outside the workspace/);
    assert.match(exportQuestion('/ws/a.py', ['/ws'], true) ?? '', /^Overwrite \/ws\/a\.py/);
    assert.match(exportQuestion(undefined, ['/ws'], false) ?? '', /outside the workspace/);
    assert.match(exportQuestion('/wsx/a.jsonl', ['/ws'], false) ?? '', /outside the workspace/);
    assert.ok(isInside('/ws', '/ws') && !isInside('/ws2/a', '/ws'));
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Coalescer, CrashPolicy } from '../src/core/serial';

const tick = () => new Promise((r) => setTimeout(r, 5));

test('runs never overlap and a burst of requests coalesces into one more run', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const c = new Coalescer(async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs++;
        await tick();
        active--;
    });
    const first = c.request();
    await Promise.resolve();
    await Promise.resolve();
    // first is running now; these five all coalesce into a single second run
    const burst = [c.request(), c.request(), c.request(), c.request(), c.request()];
    await Promise.all([first, ...burst]);
    assert.equal(maxActive, 1);
    assert.equal(runs, 2);
    assert.equal(new Set(burst).size, 1);
});

test('requests before the first run starts share it', async () => {
    let runs = 0;
    const c = new Coalescer(async () => {
        runs++;
    });
    await Promise.all([c.request(), c.request()]);
    assert.equal(runs, 1);
    await c.request();
    assert.equal(runs, 2);
});

test('a failing run rejects its callers but does not block later runs', async () => {
    let n = 0;
    const c = new Coalescer(async () => {
        n++;
        if (n === 1) {
            throw new Error('boom');
        }
    });
    await assert.rejects(c.request(), /boom/);
    await c.request();
    assert.equal(n, 2);
    await c.idle();
});

test('crash policy: restarts, then gives up after too many crashes in the window', () => {
    const p = new CrashPolicy(2, 1000);
    assert.equal(p.onCrash(0), 'restart');
    assert.equal(p.onCrash(100), 'restart');
    assert.equal(p.onCrash(200), 'giveUp');
    const q = new CrashPolicy(2, 1000);
    assert.equal(q.onCrash(0), 'restart');
    assert.equal(q.onCrash(100), 'restart');
    assert.equal(q.onCrash(5000), 'restart', 'old crashes leave the window');
});

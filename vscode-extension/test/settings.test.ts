import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
    DEFAULT_SETTINGS,
    installPolicy,
    interpreterSetting,
    LIMITS,
    SECTION,
    SEVERITIES,
    toServerSettings,
    UNDERLINES,
} from '../src/core/settings';

test('defaults when nothing is set', () => {
    const m = toServerSettings(undefined);
    assert.deepEqual(m.settings, DEFAULT_SETTINGS);
    assert.deepEqual(m.problems, []);
});

test('VS Code configuration object maps to the server keys only', () => {
    const raw = {
        enable: false,
        threshold: 0.75,
        k: 200,
        kAuto: false,
        minTokens: 30,
        minLines: 3,
        severity: 'warning',
        underline: 'firstLine',
        languages: ['python', ' java ', ''],
        exclude: ['**/gen/**'],
        debounceMs: 0,
        maxFileBytes: 1000,
        referencesOutsideWorkspace: true,
        insertions: false,
        insertionMinLines: 5,
        insertionThreshold: 0.8,
        insertionDiagnostics: true,
        insertionLensSeconds: 0,
        interpreter: ['/x/python'],
        installIfMissing: 'never',
        trace: { server: 'verbose' },
    };
    const m = toServerSettings(raw);
    assert.deepEqual(m.problems, []);
    assert.deepEqual(m.settings, {
        enable: false,
        threshold: 0.75,
        k: 200,
        minTokens: 30,
        minLines: 3,
        severity: 'warning',
        underline: 'firstLine',
        languages: ['python', 'java'],
        exclude: ['**/gen/**'],
        debounceMs: 0,
        maxFileBytes: 1000,
        referencesOutsideWorkspace: true,
        insertions: false,
        insertionMinLines: 5,
        insertionThreshold: 0.8,
        insertionDiagnostics: true,
        insertionLensSeconds: 0,
        showSimilar: false,
        maxDiagnostics: 20,
    });
    assert.ok(!('interpreter' in m.settings));
    assert.ok(!('trace' in m.settings));
    assert.ok(!('kAuto' in m.settings));
});

test('kAuto sends k = "auto", whatever k says', () => {
    assert.equal(toServerSettings({ k: 10, kAuto: true }).settings.k, 'auto');
    assert.equal(toServerSettings({ k: 'oops', kAuto: true }).problems.length, 0);
    assert.equal(toServerSettings({ k: 'auto' }).settings.k, 'auto');
    assert.equal(toServerSettings({ k: 0 }).settings.k, 0);
});

test('malformed values fall back to defaults with a note', () => {
    const m = toServerSettings({ threshold: 7, k: -1, severity: 'fatal', minTokens: 2.5, languages: 'python', enable: 'yes', kAuto: 'no' });
    assert.equal(m.settings.threshold, 0.6);
    assert.equal(m.settings.k, 500);
    assert.equal(m.settings.severity, 'information');
    assert.equal(m.settings.minTokens, 50);
    assert.deepEqual(m.settings.languages, []);
    assert.equal(m.settings.enable, true);
    assert.equal(m.problems.length, 7);
    assert.match(m.problems.find((p) => p.startsWith('crystalLsp.threshold'))!, /7 is not a number in \(0, 1\]; using 0.6/);
});

test('underline: range or firstLine, anything else falls back to range with a note', () => {
    assert.equal(toServerSettings({ underline: 'firstLine' }).settings.underline, 'firstLine');
    assert.equal(toServerSettings({ underline: 'range' }).settings.underline, 'range');
    for (const junk of ['first', 'FIRSTLINE', 1, true]) {
        const m = toServerSettings({ underline: junk });
        assert.equal(m.settings.underline, 'range');
        assert.deepEqual(m.problems, [
            `crystalLsp.underline: ${JSON.stringify(junk)} is not one of range, firstLine; using "range"`,
        ]);
    }
});

test('threshold bounds: 0 rejected, 1 accepted', () => {
    assert.equal(toServerSettings({ threshold: 0 }).settings.threshold, 0.6);
    assert.equal(toServerSettings({ threshold: 1 }).settings.threshold, 1);
    assert.equal(toServerSettings({ threshold: Number.NaN }).settings.threshold, 0.6);
});

test('null values (unset in a scope) mean default, silently', () => {
    const m = toServerSettings({ threshold: null, languages: null });
    assert.equal(m.settings.threshold, 0.6);
    assert.deepEqual(m.problems, []);
});

test('install policy and interpreter setting tolerate junk', () => {
    assert.equal(installPolicy('always'), 'always');
    assert.equal(installPolicy('never'), 'never');
    assert.equal(installPolicy('sometimes'), 'ask');
    assert.equal(installPolicy(undefined), 'ask');
    assert.deepEqual(interpreterSetting(['uv', ' run ', '', 'python', 3]), ['uv', 'run', 'python']);
    assert.deepEqual(interpreterSetting(' /usr/bin/python3 '), ['/usr/bin/python3']);
    assert.deepEqual(interpreterSetting(''), []);
    assert.deepEqual(interpreterSetting(null), []);
});

test('numbers above their maximum fall back to defaults with a note', () => {
    const m = toServerSettings({ debounceMs: 60_001, maxFileBytes: 2 ** 40 + 1, minLines: 100_000, k: 10_000_001 });
    assert.equal(m.settings.debounceMs, 300);
    assert.equal(m.settings.maxFileBytes, 2_000_000);
    assert.equal(m.settings.minLines, 100_000);
    assert.equal(m.settings.k, 500);
    assert.deepEqual(m.problems, [
        'crystalLsp.k: 10000001 is not an integer <= 10000000; using 500',
        'crystalLsp.debounceMs: 60001 is not an integer <= 60000; using 300',
        'crystalLsp.maxFileBytes: 1099511627777 is not an integer <= 1099511627776; using 2000000',
    ]);
    assert.equal(toServerSettings({ maxFileBytes: 0 }).settings.maxFileBytes, 0); // 0: no limit
});

test('defaults and ranges are the ones package.json declares', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
    const properties: Record<string, Record<string, unknown>> = manifest.contributes.configuration.properties;
    for (const [key, value] of Object.entries(DEFAULT_SETTINGS)) {
        assert.deepEqual(properties[`${SECTION}.${key}`].default, value, key);
    }
    for (const [key, limits] of Object.entries(LIMITS)) {
        const declared = properties[`${SECTION}.${key}`];
        for (const bound of ['minimum', 'exclusiveMinimum', 'maximum'] as const) {
            assert.equal(declared[bound], limits[bound], `${key} ${bound}`);
        }
    }
    assert.deepEqual(properties[`${SECTION}.severity`].enum, SEVERITIES);
    assert.deepEqual(properties[`${SECTION}.underline`].enum, UNDERLINES);
});

test('insertion settings out of range keep their defaults', () => {
    const m = toServerSettings({ insertionMinLines: 0, insertionThreshold: 0, insertionLensSeconds: 86_401, insertions: 'yes' });
    assert.equal(m.settings.insertionMinLines, DEFAULT_SETTINGS.insertionMinLines);
    assert.equal(m.settings.insertionThreshold, DEFAULT_SETTINGS.insertionThreshold);
    assert.equal(m.settings.insertionLensSeconds, DEFAULT_SETTINGS.insertionLensSeconds);
    assert.equal(m.settings.insertions, true);
    assert.deepEqual(m.problems, [
        'crystalLsp.insertions: "yes" is not true or false; using true',
        'crystalLsp.insertionMinLines: 0 is not an integer >= 1; using 3',
        'crystalLsp.insertionThreshold: 0 is not a number in (0, 1]; using 0.6',
        'crystalLsp.insertionLensSeconds: 86401 is not an integer <= 86400; using 120',
    ]);
});

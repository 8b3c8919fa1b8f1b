import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import {
    compareVersions,
    decide,
    expandVariables,
    installSteps,
    isSupported,
    parseProbe,
    probeFailure,
    privateEnvDir,
    Probe,
    PROBE_SCRIPT,
    resolveInterpreter,
    venvPython,
    wheelVersion,
} from '../src/core/python';

const vars = { workspaceFolder: '/ws', home: '/home/u', env: { VENV: '/opt/venv' } };

test('resolution order: the setting wins over everything', async () => {
    let asked = false;
    const r = await resolveInterpreter({
        setting: ['${workspaceFolder}/.venv/bin/python'],
        pythonExtension: async () => {
            asked = true;
            return '/from/ext';
        },
        platform: 'linux',
        vars,
    });
    assert.deepEqual(r, { command: ['/ws/.venv/bin/python'], source: 'setting' });
    assert.equal(asked, false, 'the Python extension is not consulted when the setting is set');
});

test('resolution order: then the Python extension', async () => {
    const r = await resolveInterpreter({ setting: [], pythonExtension: async () => '/from/ext/python', platform: 'linux', vars });
    assert.deepEqual(r, { command: ['/from/ext/python'], source: 'pythonExtension' });
});

test('resolution order: then python3 on PATH (python on Windows)', async () => {
    assert.deepEqual(await resolveInterpreter({ setting: [], platform: 'linux', vars }), { command: ['python3'], source: 'path' });
    assert.deepEqual(await resolveInterpreter({ setting: [], platform: 'win32', vars }), { command: ['python'], source: 'path' });
    const failing = await resolveInterpreter({
        setting: [],
        pythonExtension: async () => {
            throw new Error('extension broke');
        },
        platform: 'linux',
        vars,
    });
    assert.equal(failing.source, 'path');
    const empty = await resolveInterpreter({ setting: [], pythonExtension: async () => '  ', platform: 'darwin', vars });
    assert.equal(empty.source, 'path');
});

test('variables in the interpreter setting', () => {
    assert.equal(expandVariables('~/venv/bin/python', vars), '/home/u/venv/bin/python');
    assert.equal(expandVariables('${userHome}/x', vars), '/home/u/x');
    assert.equal(expandVariables('${env:VENV}/bin/python', vars), '/opt/venv/bin/python');
    assert.equal(expandVariables('${env:MISSING}x', vars), 'x');
    assert.equal(expandVariables('${workspaceFolder}', {}), '${workspaceFolder}');
    assert.equal(expandVariables('a~b', vars), 'a~b');
});

const probe = (over: Partial<Probe>): Probe => ({
    version: [3, 11, 7],
    executable: '/usr/bin/python3',
    inVenv: true,
    conda: false,
    externallyManaged: false,
    pip: true,
    crystal: '0.1.0',
    server: true,
    ...over,
});

test('probe output is parsed from among other lines', () => {
    const p = parseProbe(
        'sitecustomize says hi\nCRYSTAL_PROBE {"version": [3, 12, 1], "executable": "/v/bin/python", "inVenv": true, "conda": false, ' +
            '"externallyManaged": false, "pip": true, "crystal": null, "server": false, "serverError": "ModuleNotFoundError: numpy"}\n',
    );
    assert.deepEqual(p.version, [3, 12, 1]);
    assert.equal(p.crystal, null);
    assert.equal(p.serverError, 'ModuleNotFoundError: numpy');
    assert.throws(() => parseProbe('Python 2.7.18\n'), /no probe result/);
    assert.throws(() => parseProbe('CRYSTAL_PROBE {"version": "3"}'), /malformed/);
});

test('the probe script runs on the machine Python and reports it', () => {
    let out: string;
    try {
        out = execFileSync('python3', ['-c', PROBE_SCRIPT], { encoding: 'utf8' });
    } catch {
        return; // no python3 here: nothing to check
    }
    const p = parseProbe(out);
    assert.ok(p.version[0] === 3);
    assert.ok(p.executable.length > 0);
});

test('version check: 3.10 or newer', () => {
    assert.equal(isSupported([3, 10, 0]), true);
    assert.equal(isSupported([3, 13, 1]), true);
    assert.equal(isSupported([4, 0, 0]), true);
    assert.equal(isSupported([3, 9, 18]), false);
    assert.equal(isSupported([2, 7, 18]), false);
    assert.deepEqual(decide(probe({ version: [3, 9, 2] }), '0.1.0'), { kind: 'tooOld', version: '3.9.2' });
});

test('version comparison', () => {
    assert.ok(compareVersions('0.1.10', '0.1.9') > 0);
    assert.ok(compareVersions('0.2.0.dev1', '0.2.0') < 0);
    assert.ok(compareVersions('0.2.0rc1', '0.2.0') < 0);
    assert.equal(compareVersions('0.1', '0.1.0'), 0);
    assert.equal(compareVersions('0.1.0+local', '0.1.0'), 0);
    assert.ok(compareVersions('0.1.0.post1', '0.1.0') >= 0);
    assert.ok(compareVersions('1.0.0', '0.9.9') > 0);
});

test('launch decision', () => {
    assert.deepEqual(decide(probe({}), '0.1.0'), { kind: 'run' });
    assert.deepEqual(decide(probe({}), undefined), { kind: 'run' });
    assert.deepEqual(decide(probe({ crystal: null, server: false }), '0.1.0'), {
        kind: 'install',
        reason: 'missing',
        target: 'inPlace',
        optional: false,
    });
    assert.deepEqual(decide(probe({ server: false, serverError: 'ImportError' }), '0.1.0'), {
        kind: 'install',
        reason: 'broken',
        target: 'inPlace',
        optional: false,
    });
    assert.deepEqual(decide(probe({ crystal: '0.0.9' }), '0.1.0'), { kind: 'install', reason: 'outdated', target: 'inPlace', optional: true });
    assert.deepEqual(decide(probe({ crystal: '0.2.0' }), '0.1.0'), { kind: 'run' });
});

test('a Python that is not a venv is never modified: private environment instead', () => {
    const missing = { crystal: null, server: false };
    assert.equal((decide(probe({ ...missing, inVenv: false }), '0.1.0') as { target: string }).target, 'privateEnv');
    assert.equal((decide(probe({ ...missing, externallyManaged: true }), '0.1.0') as { target: string }).target, 'privateEnv');
    assert.equal((decide(probe({ ...missing, pip: false }), '0.1.0') as { target: string }).target, 'privateEnv');
    assert.equal((decide(probe({ ...missing, inVenv: false, conda: true }), '0.1.0') as { target: string }).target, 'inPlace');
});

test('install steps: in place with the bundled wheel', () => {
    const plan = installSteps({ python: ['/v/bin/python'], target: 'inPlace', wheel: '/ext/bundled/crystal_lsp-0.1.0-py3-none-any.whl', envDir: '/unused', platform: 'linux' });
    assert.equal(plan.steps.length, 1);
    assert.deepEqual(plan.steps[0].argv.slice(0, 4), ['/v/bin/python', '-m', 'pip', 'install']);
    assert.equal(plan.steps[0].argv.at(-1), '/ext/bundled/crystal_lsp-0.1.0-py3-none-any.whl');
    assert.deepEqual(plan.resultPython, ['/v/bin/python']);
});

test('install steps: private environment, and from the index without a wheel', () => {
    const plan = installSteps({ python: ['uv', 'run', 'python'], target: 'privateEnv', wheel: undefined, envDir: '/store/envs/abc', platform: 'linux' });
    assert.deepEqual(plan.steps[0].argv, ['uv', 'run', 'python', '-m', 'venv', '--clear', '/store/envs/abc']);
    assert.equal(plan.steps[1].argv[0], '/store/envs/abc/bin/python');
    assert.equal(plan.steps[1].argv.at(-1), 'crystal-lsp');
    assert.deepEqual(plan.resultPython, ['/store/envs/abc/bin/python']);
    assert.equal(venvPython('C:\\s\\env', 'win32'), 'C:\\s\\env\\Scripts\\python.exe');
});

test('private environment directory is stable per base interpreter', () => {
    const a = privateEnvDir('/store', '/usr/bin/python3');
    assert.equal(a, privateEnvDir('/store', '/usr/bin/python3'));
    assert.notEqual(a, privateEnvDir('/store', '/usr/bin/python3.12'));
    assert.match(a, /^\/store\/envs\/[0-9a-f]{12}$/);
});

test('wheel version from its file name', () => {
    assert.equal(wheelVersion('/x/crystal_lsp-0.1.0-py3-none-any.whl'), '0.1.0');
    assert.equal(wheelVersion('crystal_lsp-1.2.3.dev4-py3-none-any.whl'), '1.2.3.dev4');
    assert.equal(wheelVersion('numpy-2.0.0-cp311-cp311-linux_x86_64.whl'), undefined);
    assert.equal(wheelVersion('README.md'), undefined);
});

test('a failed probe is one plain sentence without the probe script', () => {
    assert.equal(probeFailure(['/nope/python'], 'ENOENT', ''), '/nope/python was not found');
    const noisy = `Traceback (most recent call last):\n${PROBE_SCRIPT}\nSyntaxError: invalid syntax\n`;
    const msg = probeFailure(['/usr/bin/node'], 1, noisy);
    assert.equal(msg, '/usr/bin/node is not a working Python 3 interpreter: SyntaxError: invalid syntax');
    assert.equal(probeFailure(['/bin/false'], 1, ''), '/bin/false is not a working Python 3 interpreter (exit code 1)');
    assert.throws(() => parseProbe(`-c ${PROBE_SCRIPT}\n`), (e: Error) => !e.message.includes('CRYSTAL_PROBE') && /Python 3/.test(e.message));
});

/**
 * Which Python runs the server, and what it can do. No VS Code here: the sources of candidates
 * are passed in, so the resolution order and the launch decision are unit-tested.
 *
 * Order: `crystalLsp.interpreter`, then the Python extension's active environment (when that
 * extension is installed), then `python3` (`python` on Windows) on PATH.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';

export const MIN_PYTHON: readonly [number, number] = [3, 10];

export type InterpreterSource = 'setting' | 'pythonExtension' | 'path' | 'private';

export interface Interpreter {
    /** argv prefix that runs Python, e.g. `["/x/.venv/bin/python"]` or `["uv", "run", "python"]`. */
    command: string[];
    source: InterpreterSource;
}

export interface ResolveInputs {
    /** `crystalLsp.interpreter`, already cleaned by `interpreterSetting`. */
    setting: readonly string[];
    /** The Python extension's active environment executable; absent or throwing: not available. */
    pythonExtension?: () => Promise<string | undefined>;
    platform: NodeJS.Platform;
    vars: ExpandVars;
}

export interface ExpandVars {
    workspaceFolder?: string;
    home?: string;
    env?: Record<string, string | undefined>;
}

/** Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. */
export function expandVariables(arg: string, vars: ExpandVars): string {
    let out = arg.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
        if (name === 'workspaceFolder') {
            return vars.workspaceFolder ?? whole;
        }
        if (name === 'userHome') {
            return vars.home ?? whole;
        }
        return vars.env?.[envName ?? ''] ?? '';
    });
    if (vars.home && (out === '~' || out.startsWith('~/') || out.startsWith('~\\'))) {
        out = vars.home + out.slice(1);
    }
    return out;
}

export function pathCommand(platform: NodeJS.Platform): string[] {
    return platform === 'win32' ? ['python'] : ['python3'];
}

export async function resolveInterpreter(inputs: ResolveInputs): Promise<Interpreter> {
    if (inputs.setting.length > 0) {
        return { command: inputs.setting.map((a) => expandVariables(a, inputs.vars)), source: 'setting' };
    }
    if (inputs.pythonExtension) {
        let exe: string | undefined;
        try {
            exe = await inputs.pythonExtension();
        } catch {
            exe = undefined;
        }
        if (exe && exe.trim()) {
            return { command: [exe], source: 'pythonExtension' };
        }
    }
    return { command: pathCommand(inputs.platform), source: 'path' };
}

export function describeSource(source: InterpreterSource): string {
    switch (source) {
        case 'setting':
            return 'the crystalLsp.interpreter setting';
        case 'pythonExtension':
            return "the Python extension's active environment";
        case 'path':
            return 'PATH';
        case 'private':
            return "the extension's private environment";
    }
}

/**
 * Run as `python -c PROBE_SCRIPT`. It must run on any Python 3 (so it can report an old one)
 * and print exactly one `CRYSTAL_PROBE {json}` line.
 */
export const PROBE_SCRIPT = [
    'import json, os, sys',
    'r = {"version": list(sys.version_info[:3]), "executable": sys.executable,',
    '     "inVenv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),',
    '     "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),',
    '     "externallyManaged": False, "pip": False, "crystal": None, "server": False}',
    'try:',
    '    import sysconfig',
    '    r["externallyManaged"] = os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))',
    'except Exception:',
    '    pass',
    'try:',
    '    import importlib.util',
    '    r["pip"] = importlib.util.find_spec("pip") is not None',
    '    try:',
    '        import importlib',
    '        importlib.import_module("crystal_lsp.server")',
    '        cli = importlib.import_module("crystal_lsp.cli.main")',
    '        if hasattr(cli, "build_parser"):',
    '            cli.build_parser()  # imports every subcommand, as `-m crystal_lsp serve` does',
    '        r["server"] = True',
    '    except Exception as e:',
    '        r["serverError"] = "%s: %s" % (type(e).__name__, e)',
    '    m = sys.modules.get("crystal_lsp")',
    '    if m is not None:',
    '        r["crystal"] = getattr(m, "__version__", None)',
    '    if r["crystal"] is None:',
    '        try:',
    '            import importlib.metadata as md',
    '            r["crystal"] = md.version("crystal-lsp")',
    '        except Exception:',
    '            pass',
    'except Exception as e:',
    '    r["probeError"] = "%s: %s" % (type(e).__name__, e)',
    'print("CRYSTAL_PROBE " + json.dumps(r))',
].join('\n');

export interface Probe {
    version: [number, number, number];
    executable: string;
    inVenv: boolean;
    conda: boolean;
    externallyManaged: boolean;
    pip: boolean;
    /** Installed crystal-lsp version, or null. */
    crystal: string | null;
    /** `crystal_lsp.server` and the CLI import (crystal-lsp and its dependencies are complete). */
    server: boolean;
    serverError?: string;
}

/**
 * One plain sentence for a failed probe run: which program, and its last line of error output
 * (the probe script is never part of it).
 */
export function probeFailure(command: readonly string[], code: string | number | undefined, stderr: string): string {
    if (code === 'ENOENT') {
        return `${command[0]} was not found`;
    }
    if (code === 'EACCES') {
        return `${command[0]} cannot be run (permission denied)`;
    }
    const firstScriptLine = PROBE_SCRIPT.split('\n')[0];
    const last = stderr
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter((l) => l && !l.includes(firstScriptLine) && !PROBE_SCRIPT.includes(l))
        .pop();
    const detail = last ? `: ${last.slice(0, 200)}` : typeof code === 'number' ? ` (exit code ${code})` : '';
    return `${command[0]} is not a working Python 3 interpreter${detail}`;
}

/** Parses the probe's stdout; throws with a readable message when it is not there. */
export function parseProbe(stdout: string): Probe {
    const line = stdout.split(/\r?\n/).find((l) => l.startsWith('CRYSTAL_PROBE '));
    if (!line) {
        // what it printed may echo the probe script (a shell, `echo`): never shown to the user
        throw new Error('it printed no probe result: is it a Python 3 interpreter?');
    }
    const raw = JSON.parse(line.slice('CRYSTAL_PROBE '.length)) as Record<string, unknown>;
    const v = raw.version;
    if (!Array.isArray(v) || v.length < 2 || !v.every((x) => typeof x === 'number')) {
        throw new Error(`malformed probe result: ${line}`);
    }
    return {
        version: [v[0] as number, v[1] as number, (v[2] as number | undefined) ?? 0],
        executable: typeof raw.executable === 'string' ? raw.executable : '',
        inVenv: raw.inVenv === true,
        conda: raw.conda === true,
        externallyManaged: raw.externallyManaged === true,
        pip: raw.pip === true,
        crystal: typeof raw.crystal === 'string' ? raw.crystal : null,
        server: raw.server === true,
        serverError: typeof raw.serverError === 'string' ? raw.serverError : undefined,
    };
}

export function formatVersion(v: readonly number[]): string {
    return v.join('.');
}

export function isSupported(v: readonly number[]): boolean {
    return v[0] > MIN_PYTHON[0] || (v[0] === MIN_PYTHON[0] && v[1] >= MIN_PYTHON[1]);
}

/**
 * Compares two PEP 440-ish versions by their release numbers (`0.1.10` > `0.1.9`); a pre- or
 * dev-release sorts before its release (`0.2.0.dev1` < `0.2.0`). Returns <0, 0 or >0.
 */
export function compareVersions(a: string, b: string): number {
    const parse = (s: string): { nums: number[]; pre: boolean } => {
        const m = /^v?(\d+(?:\.\d+)*)(.*)$/.exec(s.trim());
        if (!m) {
            return { nums: [], pre: true };
        }
        const rest = m[2].replace(/^\+.*/, '');
        return { nums: m[1].split('.').map(Number), pre: rest.length > 0 && !rest.startsWith('.post') && !rest.startsWith('post') };
    };
    const x = parse(a);
    const y = parse(b);
    const n = Math.max(x.nums.length, y.nums.length);
    for (let i = 0; i < n; i++) {
        const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
        if (d !== 0) {
            return d;
        }
    }
    return Number(y.pre) - Number(x.pre);
}

export type Decision =
    | { kind: 'run' }
    | { kind: 'tooOld'; version: string }
    | { kind: 'install'; reason: 'missing' | 'broken' | 'outdated'; target: 'inPlace' | 'privateEnv'; optional: boolean };

/**
 * What to do with a probed interpreter. `bundled` is the version of the wheel shipped in the
 * extension (undefined if none). An interpreter that is not a virtual or conda environment, is
 * externally managed (PEP 668) or has no pip is never modified: we build a private venv from it.
 */
export function decide(probe: Probe, bundled: string | undefined): Decision {
    if (!isSupported(probe.version)) {
        return { kind: 'tooOld', version: formatVersion(probe.version) };
    }
    const target = (probe.inVenv || probe.conda) && !probe.externallyManaged && probe.pip ? 'inPlace' : 'privateEnv';
    if (!probe.server) {
        return { kind: 'install', reason: probe.crystal === null ? 'missing' : 'broken', target, optional: false };
    }
    if (bundled !== undefined && probe.crystal !== null && compareVersions(probe.crystal, bundled) < 0) {
        // Works, but older than what we ship: offer, do not insist.
        return { kind: 'install', reason: 'outdated', target, optional: true };
    }
    return { kind: 'run' };
}

/** Where the private environment built from a given base interpreter lives. */
export function privateEnvDir(storageDir: string, baseExecutable: string): string {
    const id = createHash('sha256').update(baseExecutable).digest('hex').slice(0, 12);
    return path.join(storageDir, 'envs', id);
}

export function venvPython(envDir: string, platform: NodeJS.Platform): string {
    return platform === 'win32' ? path.win32.join(envDir, 'Scripts', 'python.exe') : path.posix.join(envDir, 'bin', 'python');
}

export interface InstallStep {
    title: string;
    argv: string[];
}

/**
 * The commands that make `python -m crystal_lsp serve` work. `wheel`: path of the bundled
 * crystal-lsp wheel (its dependencies come from the user's package index), or undefined to
 * install `crystal-lsp` from the index.
 */
export function installSteps(options: {
    python: string[];
    target: 'inPlace' | 'privateEnv';
    wheel: string | undefined;
    envDir: string;
    platform: NodeJS.Platform;
}): { steps: InstallStep[]; resultPython: string[] } {
    const pkg = options.wheel ?? 'crystal-lsp';
    const pipArgs = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--upgrade'];
    if (options.target === 'inPlace') {
        return {
            steps: [{ title: `pip install ${path.basename(pkg)}`, argv: [...options.python, ...pipArgs, pkg] }],
            resultPython: options.python,
        };
    }
    const py = venvPython(options.envDir, options.platform);
    return {
        steps: [
            { title: 'Creating a private virtual environment', argv: [...options.python, '-m', 'venv', '--clear', options.envDir] },
            { title: `pip install ${path.basename(pkg)}`, argv: [py, ...pipArgs, pkg] },
        ],
        resultPython: [py],
    };
}

/** Version of a wheel from its file name (`crystal_lsp-0.1.0-py3-none-any.whl` → `0.1.0`). */
export function wheelVersion(fileName: string): string | undefined {
    const m = /^crystal_lsp-([^-]+)-.*\.whl$/.exec(path.basename(fileName));
    return m ? m[1] : undefined;
}

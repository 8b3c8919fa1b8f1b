/**
 * Finding and probing the Python that runs the server (the VS Code side of core/python.ts).
 *
 * The Python extension (ms-python.python) is used only when installed: its public API is read
 * from the extension's exports with a minimal local type instead of a dependency on
 * @vscode/python-extension, and it is not an extensionDependency (code-server and offline
 * installs usually have no marketplace to fetch it from).
 */
import { execFile } from 'node:child_process';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { Interpreter, parseProbe, Probe, PROBE_SCRIPT, probeFailure, resolveInterpreter } from './core/python';
import { interpreterSetting, SECTION } from './core/settings';

const PYTHON_EXTENSION_ID = 'ms-python.python';

interface EnvironmentPath {
    id: string;
    path: string;
}

interface PythonEnvironmentsApi {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
    environments?: PythonEnvironmentsApi;
}

async function pythonApi(): Promise<PythonEnvironmentsApi | undefined> {
    const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
    if (!ext) {
        return undefined;
    }
    const api = ext.isActive ? ext.exports : await ext.activate();
    return api?.environments;
}

export function hasPythonExtension(): boolean {
    return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

/** The active environment's executable, or undefined when the Python extension is absent. */
export async function activeEnvironmentExecutable(resource?: vscode.Uri): Promise<string | undefined> {
    const api = await pythonApi();
    if (!api) {
        return undefined;
    }
    const envPath = api.getActiveEnvironmentPath(resource);
    const env = await api.resolveEnvironment(envPath);
    return env?.executable.uri?.fsPath ?? envPath.path;
}

/** Calls `listener` when the Python extension's active environment changes (if installed). */
export async function onDidChangeActiveEnvironment(listener: () => void): Promise<vscode.Disposable | undefined> {
    try {
        const api = await pythonApi();
        return api?.onDidChangeActiveEnvironmentPath(() => listener());
    } catch {
        return undefined;
    }
}

export function workspaceFolder(): vscode.WorkspaceFolder | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    return (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
}

export async function findInterpreter(): Promise<Interpreter> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const setting = interpreterSetting(vscode.workspace.getConfiguration(SECTION, folder?.uri).get('interpreter'));
    return resolveInterpreter({
        setting,
        pythonExtension: hasPythonExtension() ? () => activeEnvironmentExecutable(folder?.uri) : undefined,
        platform: process.platform,
        vars: { workspaceFolder: folder?.uri.fsPath, home: os.homedir(), env: process.env },
    });
}

export function serverCwd(): string {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
}

export function serverEnv(): NodeJS.ProcessEnv {
    return { ...process.env, PYTHONUTF8: '1', PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' };
}

/** Runs the probe script; rejects with a readable error (interpreter missing, crashed, …). */
export function probe(command: readonly string[], timeoutMs = 60_000): Promise<Probe> {
    return new Promise((resolve, reject) => {
        execFile(
            command[0],
            [...command.slice(1), '-c', PROBE_SCRIPT],
            { cwd: serverCwd(), env: serverEnv(), timeout: timeoutMs, windowsHide: true, maxBuffer: 1 << 20 },
            (error, stdout, stderr) => {
                if (error) {
                    // error.message repeats the command line, probe script included: not shown
                    reject(new Error(probeFailure(command, (error as NodeJS.ErrnoException).code, stderr)));
                    return;
                }
                try {
                    resolve(parseProbe(stdout));
                } catch (e) {
                    reject(new Error(`${command[0]}: ${e instanceof Error ? e.message : String(e)}`));
                }
            },
        );
    });
}

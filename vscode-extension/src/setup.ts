/**
 * Installing the server into the chosen Python: the bundled crystal-lsp wheel (its dependencies
 * from the user's package index), or a private venv built from a Python we must not modify.
 * Runs with a cancellable progress notification and streams pip's output to the log.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { InstallStep, wheelVersion } from './core/python';
import { serverCwd, serverEnv } from './python';

export interface BundledWheel {
    path: string;
    version: string;
}

/** The wheel shipped in `bundled/` (built from the repository by tests/ci/20-extension.sh). */
export function bundledWheel(extensionPath: string): BundledWheel | undefined {
    const dir = path.join(extensionPath, 'bundled');
    let names: string[];
    try {
        names = fs.readdirSync(dir);
    } catch {
        return undefined;
    }
    for (const name of names.sort().reverse()) {
        const version = wheelVersion(name);
        if (version) {
            return { path: path.join(dir, name), version };
        }
    }
    return undefined;
}

function runStep(
    step: InstallStep,
    log: vscode.LogOutputChannel,
    progress: vscode.Progress<{ message?: string }>,
    token: vscode.CancellationToken,
): Promise<void> {
    return new Promise((resolve, reject) => {
        log.info(`$ ${step.argv.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`);
        const child = spawn(step.argv[0], step.argv.slice(1), { cwd: serverCwd(), env: serverEnv(), windowsHide: true });
        const tail: string[] = [];
        const onData = (buf: Buffer): void => {
            for (const line of buf.toString('utf8').split(/\r?\n/)) {
                if (!line.trim()) {
                    continue;
                }
                log.info(line);
                tail.push(line);
                if (tail.length > 12) {
                    tail.shift();
                }
                const short = line.trim().replace(/\s+/g, ' ');
                progress.report({ message: `${step.title}: ${short.length > 90 ? short.slice(0, 87) + '…' : short}` });
            }
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        const sub = token.onCancellationRequested(() => child.kill());
        child.on('error', (err) => {
            sub.dispose();
            reject(new Error(`${step.argv[0]}: ${err.message}`));
        });
        child.on('close', (code, signal) => {
            sub.dispose();
            if (token.isCancellationRequested) {
                reject(new vscode.CancellationError());
            } else if (code === 0) {
                resolve();
            } else {
                const last = tail.slice(-4).join(' | ');
                reject(new Error(`${step.title} failed (${signal ?? `exit ${code}`}): ${last}`));
            }
        });
    });
}

/** Runs the steps in a progress notification; rejects on failure or cancellation. */
export async function runInstall(steps: InstallStep[], title: string, log: vscode.LogOutputChannel): Promise<void> {
    await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        async (progress, token) => {
            for (const step of steps) {
                progress.report({ message: step.title });
                await runStep(step, log, progress, token);
            }
        },
    );
}

/**
 * Command registration with one error boundary: failures become an error notification with
 * the log one click away, instead of VS Code's generic "command failed".
 */
import * as vscode from 'vscode';

let logChannel: vscode.LogOutputChannel | undefined;

export function setGuardLog(log: vscode.LogOutputChannel): void {
    logChannel = log;
}

export function registerGuarded(id: string, fn: (...args: any[]) => unknown): vscode.Disposable {
    return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
            return await fn(...args);
        } catch (e) {
            if (e instanceof vscode.CancellationError) {
                return undefined;
            }
            const message = e instanceof Error ? e.message : String(e);
            logChannel?.error(`${id}: ${message}`);
            void vscode.window.showErrorMessage(`Crystal: ${message}`, 'Show Log').then((answer) => {
                if (answer === 'Show Log') {
                    logChannel?.show();
                }
            });
            return undefined;
        }
    });
}

/**
 * `Crystal: Show inserted code` and `Crystal: Export inserted code as JSONL…`: the session's tally
 * of blocks that landed in one edit (`crystal/insertions`), as a report or as items of
 * `crystal-lsp score --jsonl`.
 */
import * as vscode from 'vscode';
import { exportQuestion } from '../core/exportTarget';
import { insertionsMarkdown } from '../core/format';
import { INSERTIONS_REQUEST, InsertionsExport, InsertionsResult } from '../core/protocol';
import type { E2EDump } from '../e2eDump';
import { registerGuarded } from '../guard';
import type { Reports } from '../reports';
import type { ServerManager } from '../server';

export function registerInsertionCommands(server: ServerManager, reports: Reports, dump: E2EDump | undefined): vscode.Disposable[] {
    return [
        registerGuarded('crystalLsp.showInsertions', async () => {
            const client = await server.running();
            const result = await client.sendRequest<InsertionsResult>(INSERTIONS_REQUEST, {});
            dump?.write('insertions.json', result);
            await reports.open('Inserted code', insertionsMarkdown(result));
            return result;
        }),
        /** Programmatic use: a file path (or URI string) to write to, else a save dialog. */
        registerGuarded('crystalLsp.exportInsertions', async (target?: string) => {
            const client = await server.running();
            const result = await client.sendRequest<InsertionsExport>(INSERTIONS_REQUEST, { format: 'jsonl' });
            if (result.count === 0) {
                void vscode.window.showInformationMessage('Crystal: no scored block with a closest region to export yet.');
                return result;
            }
            let uri: vscode.Uri | undefined;
            if (typeof target === 'string' && target) {
                uri = target.includes('://') ? vscode.Uri.parse(target) : vscode.Uri.file(target);
            } else {
                const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
                uri = await vscode.window.showSaveDialog({
                    title: 'Export inserted code',
                    defaultUri: folder ? vscode.Uri.joinPath(folder, 'insertions.jsonl') : undefined,
                    filters: { 'JSON Lines': ['jsonl'] },
                });
            }
            if (!uri) {
                return undefined;
            }
            // a path from a command argument may lie anywhere: ask before writing outside the
            // workspace or over a file that exists
            const exists = await vscode.workspace.fs.stat(uri).then(
                () => true,
                () => false,
            );
            const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
            const question = exportQuestion(uri.scheme === 'file' ? uri.fsPath : undefined, folders, exists);
            if (question && (await vscode.window.showWarningMessage(question, { modal: true }, 'Write')) !== 'Write') {
                return undefined;
            }
            await vscode.workspace.fs.writeFile(uri, Buffer.from(result.jsonl, 'utf8'));
            const skipped = result.withoutReferences ? ` (${result.withoutReferences} without a closest region left out)` : '';
            dump?.write('insertions-export.json', { uri: uri.toString(), count: result.count, withoutReferences: result.withoutReferences });
            void vscode.window.showInformationMessage(
                `Crystal: exported ${result.count} inserted ${result.count === 1 ? 'block' : 'blocks'}${skipped} to ${uri.fsPath}: score them with crystal-lsp score --jsonl.`,
            );
            return result;
        }),
    ];
}

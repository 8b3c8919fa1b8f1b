/**
 * `Crystal: Show inserted code` and `Crystal: Export inserted code as JSONL…`: the session's tally
 * of blocks that landed in one edit (`crystal/insertions`), as a report or as items of
 * `crystal-lsp score --jsonl`.
 */
import * as vscode from 'vscode';
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

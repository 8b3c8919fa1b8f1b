/**
 * `Crystal: Show trivially shared n-grams`, `Rebuild index`, `Restart server`, the status menu
 * and the small commands around them.
 */
import * as vscode from 'vscode';
import { trivialNgramsMarkdown } from '../core/format';
import { CMD_REBUILD_INDEX, CMD_TRIVIAL_NGRAMS, RebuildResult, TrivialNgramsResult } from '../core/protocol';
import { SECTION } from '../core/settings';
import type { E2EDump } from '../e2eDump';
import { registerGuarded } from '../guard';
import type { MatchHighlighter } from '../highlights';
import type { Reports } from '../reports';
import type { ServerManager } from '../server';

const COMMON_LANGUAGES = ['python', 'java', 'javascript', 'typescript', 'c', 'cpp', 'csharp', 'go', 'rust', 'ruby', 'php', 'kotlin'];

function executeServerCommand<T>(server: ServerManager, command: string, args: unknown[]): Promise<T> {
    return server.running().then((client) => client.sendRequest<T>('workspace/executeCommand', { command, arguments: args }));
}

async function pickLanguage(): Promise<string | undefined> {
    const active = vscode.window.activeTextEditor?.document.languageId;
    const open = vscode.workspace.textDocuments.filter((d) => d.uri.scheme === 'file').map((d) => d.languageId);
    const ids = [...new Set([active, ...open, ...COMMON_LANGUAGES].filter((x): x is string => !!x && x !== 'plaintext'))];
    const qp = vscode.window.createQuickPick();
    qp.title = 'Crystal: trivially shared n-grams of which language?';
    qp.placeholder = 'A VS Code language id or a Pygments lexer name';
    qp.items = ids.map((id) => ({ label: id, description: id === active ? 'active editor' : undefined }));
    qp.ignoreFocusOut = true;
    return new Promise((resolve) => {
        qp.onDidAccept(() => {
            resolve(qp.selectedItems[0]?.label ?? (qp.value.trim() || undefined));
            qp.hide();
        });
        qp.onDidHide(() => {
            resolve(undefined);
            qp.dispose();
        });
        qp.show();
    });
}

export function registerCommands(
    server: ServerManager,
    highlighter: MatchHighlighter,
    reports: Reports,
    log: vscode.LogOutputChannel,
    dump: E2EDump | undefined,
): vscode.Disposable[] {
    return [
        registerGuarded('crystalLsp.showTrivialNgrams', async (language?: string, top = 100) => {
            const lang = typeof language === 'string' && language ? language : await pickLanguage();
            if (!lang) {
                return undefined;
            }
            const result = await vscode.window.withProgress(
                { location: vscode.ProgressLocation.Window, title: `Crystal: trivially shared n-grams of ${lang}…` },
                () => executeServerCommand<TrivialNgramsResult>(server, CMD_TRIVIAL_NGRAMS, [{ language: lang, top }]),
            );
            dump?.write('trivial.json', result);
            await reports.open(`Trivially shared n-grams (${result.language})`, trivialNgramsMarkdown(result));
            return result;
        }),
        registerGuarded('crystalLsp.rebuildIndex', async () => {
            const result = await vscode.window.withProgress(
                { location: vscode.ProgressLocation.Notification, title: 'Crystal: rebuilding the index…' },
                () => executeServerCommand<RebuildResult>(server, CMD_REBUILD_INDEX, []),
            );
            dump?.write('rebuild.json', result);
            void vscode.window.showInformationMessage(
                `Crystal: index rebuilt: ${result.files} ${result.files === 1 ? 'file' : 'files'} in ${result.seconds.toFixed(1)} s.`,
            );
            return result;
        }),
        registerGuarded('crystalLsp.restart', () => server.userRestart()),
        registerGuarded('crystalLsp.installServer', () => server.install()),
        registerGuarded('crystalLsp.clearHighlights', () => highlighter.clear()),
        registerGuarded('crystalLsp.showLog', () => log.show()),
        registerGuarded('crystalLsp.statusMenu', async () => {
            const items: (vscode.QuickPickItem & { command: string; args?: unknown[] })[] = [
                { label: '$(output) Show server log', command: 'crystalLsp.showLog' },
                { label: '$(debug-restart) Restart server', command: 'crystalLsp.restart', detail: server.interpreterDescription },
                { label: '$(refresh) Rebuild index', command: 'crystalLsp.rebuildIndex' },
                { label: '$(symbol-numeric) Score selection against reference…', command: 'crystalLsp.scoreSelection' },
                { label: '$(list-ordered) Show trivially shared n-grams', command: 'crystalLsp.showTrivialNgrams' },
                { label: '$(history) Show inserted code (this session)', command: 'crystalLsp.showInsertions' },
                { label: '$(settings-gear) Settings', command: 'workbench.action.openSettings', args: [`@ext:crystal-lsp.crystal-lsp`] },
                { label: '$(package) Install the server into the selected Python', command: 'crystalLsp.installServer' },
            ];
            const pick = await vscode.window.showQuickPick(items, { title: 'Crystal LSP' });
            if (pick) {
                await vscode.commands.executeCommand(pick.command, ...(pick.args ?? []));
            }
        }),
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (e.affectsConfiguration(`${SECTION}.trace.server`)) {
                log.info('Trace level changed; messages show when this channel is at log level Trace.');
            }
        }),
    ];
}

/**
 * Crystal LSP for VS Code: runs `python -m crystal_lsp serve` and adds scoring commands, match
 * highlights and a status bar item on top of its diagnostics, hovers and code actions.
 */
import * as vscode from 'vscode';
import { registerCommands } from './commands/index';
import { registerInsertionCommands } from './commands/insertions';
import { registerScoreCommand } from './commands/score';
import { CompareView } from './compare';
import { CMD_COMPARE, type CompareSpec } from './core/protocol';
import { RESTART_KEYS, SECTION } from './core/settings';
import { E2EDump } from './e2eDump';
import { setGuardLog } from './guard';
import { MatchHighlighter } from './highlights';
import { onDidChangeActiveEnvironment } from './python';
import { Reports } from './reports';
import { ServerManager } from './server';
import { StatusBar } from './statusBar';

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const log = vscode.window.createOutputChannel('Crystal LSP', { log: true });
    setGuardLog(log);
    const dump = E2EDump.fromEnv();
    const status = new StatusBar(dump);
    const highlighter = new MatchHighlighter();
    const reports = new Reports();
    const server = new ServerManager(context, log, status, dump);
    const compare = new CompareView(log, dump);
    // crystal.compare (lenses, quick fixes, hover links) opens VS Code's diff view
    server.interceptCommand = (command, args, ask) =>
        command === CMD_COMPARE && args.length === 1 ? compare.open(args[0] as CompareSpec, ask) : undefined;
    manager = server;
    log.info(`Crystal LSP ${context.extension.packageJSON.version as string} in VS Code ${vscode.version}`);

    context.subscriptions.push(
        log,
        status,
        highlighter,
        reports,
        compare,
        ...(dump ? [dump] : []),
        ...registerInsertionCommands(server, reports, dump),
        registerScoreCommand(server, highlighter, reports, dump),
        ...registerCommands(server, highlighter, reports, log, dump),
        vscode.workspace.onDidChangeConfiguration((e) => {
            const key = RESTART_KEYS.find((k) => e.affectsConfiguration(`${SECTION}.${k}`));
            if (key) {
                void server.restart(`crystalLsp.${key} changed`);
            }
        }),
        { dispose: () => void server.dispose() },
    );

    // The Python extension's active environment only matters when our setting is empty.
    void onDidChangeActiveEnvironment(() => {
        const setting = vscode.workspace.getConfiguration(SECTION).get<string[]>('interpreter') ?? [];
        if (setting.length === 0) {
            void server.restart('active Python environment changed');
        }
    }).then((d) => d && context.subscriptions.push(d));

    // Do not block activation on the server: probing and (first-run) installation can take a while.
    void server.restart('activation');
}

export async function deactivate(): Promise<void> {
    await manager?.dispose();
    manager = undefined;
}

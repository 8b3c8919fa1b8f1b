/**
 * The status bar item: indexing progress, then the number of near-duplicates in the active file.
 */
import * as vscode from 'vscode';
import { DIAGNOSTIC_SOURCE, StatusParams } from './core/protocol';
import { SECTION } from './core/settings';
import { ClientPhase, StatusInput, statusView } from './core/status';
import type { E2EDump } from './e2eDump';

export class StatusBar implements vscode.Disposable {
    private readonly item: vscode.StatusBarItem;
    private readonly disposables: vscode.Disposable[] = [];
    private phase: ClientPhase = 'starting';
    private server: StatusInput['server'];
    private detail: string | undefined;
    /** Documents whose diagnostics the running server has published (cleared on restart). */
    private readonly checked = new Set<string>();

    constructor(private readonly dump?: E2EDump) {
        this.item = vscode.window.createStatusBarItem('crystalLsp.status', vscode.StatusBarAlignment.Left, 50);
        this.item.name = 'Crystal LSP';
        this.item.command = 'crystalLsp.statusMenu';
        this.disposables.push(
            this.item,
            vscode.languages.onDidChangeDiagnostics((e) => {
                if (this.phase === 'running') {
                    e.uris.forEach((u) => this.checked.add(u.toString()));
                }
                const active = vscode.window.activeTextEditor?.document.uri.toString();
                if (active && e.uris.some((u) => u.toString() === active)) {
                    this.render();
                }
            }),
            vscode.window.onDidChangeActiveTextEditor(() => this.render()),
            vscode.workspace.onDidChangeConfiguration((e) => {
                if (e.affectsConfiguration(`${SECTION}.enable`)) {
                    this.render();
                }
            }),
        );
        this.render();
        this.item.show();
    }

    setPhase(phase: ClientPhase, detail?: string): void {
        this.phase = phase;
        if (detail !== undefined) {
            this.detail = detail;
        }
        if (phase !== 'running') {
            this.server = undefined;
            this.checked.clear();
        }
        this.render();
    }

    setServerStatus(p: StatusParams): void {
        this.server = { state: p.state, message: p.message, files: p.files };
        this.render();
    }

    private duplicates(): number | undefined {
        const doc = vscode.window.activeTextEditor?.document;
        if (!doc) {
            return undefined;
        }
        return vscode.languages.getDiagnostics(doc.uri).filter((d) => d.source === DIAGNOSTIC_SOURCE).length;
    }

    private render(): void {
        const resource = vscode.window.activeTextEditor?.document.uri;
        const enabled = vscode.workspace.getConfiguration(SECTION, resource).get<boolean>('enable', true) !== false;
        const checked = resource ? this.checked.has(resource.toString()) || this.duplicates() !== 0 : undefined;
        const view = statusView({ phase: this.phase, server: this.server, enabled, duplicates: this.duplicates(), checked, detail: this.detail });
        this.item.text = view.text;
        this.item.tooltip = view.tooltip;
        this.item.backgroundColor =
            view.kind === 'error'
                ? new vscode.ThemeColor('statusBarItem.errorBackground')
                : view.kind === 'warning' && this.phase !== 'running'
                  ? new vscode.ThemeColor('statusBarItem.warningBackground')
                  : undefined;
        this.dump?.write('status.json', { text: view.text, tooltip: view.tooltip, phase: this.phase, server: this.server ?? null });
    }

    dispose(): void {
        this.disposables.forEach((d) => d.dispose());
    }
}

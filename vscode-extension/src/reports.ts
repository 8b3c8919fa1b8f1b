/**
 * Read-only Markdown documents for reports (score details, trivially shared n-grams), served
 * from memory under the `crystal-lsp-report:` scheme.
 */
import * as vscode from 'vscode';

export const REPORT_SCHEME = 'crystal-lsp-report';

export class Reports implements vscode.TextDocumentContentProvider, vscode.Disposable {
    private readonly contents = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;
    private readonly registration = vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, this);

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.contents.get(uri.toString()) ?? '';
    }

    /**
     * Shows `markdown` rendered (the Markdown preview) beside the active editor; as the
     * `<title>.md` source when the preview is not available (the built-in Markdown extension off).
     */
    async open(title: string, markdown: string, preserveFocus = true): Promise<void> {
        const safe = title.replace(/[\\/:*?"<>|#%]+/g, '_');
        const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${safe}.md` });
        this.contents.set(uri.toString(), markdown);
        this.changed.fire(uri);
        const doc = await vscode.workspace.openTextDocument(uri);
        try {
            // runs (and activates) the built-in Markdown extension; fails when it is disabled
            await vscode.commands.executeCommand('markdown.showPreviewToSide', doc.uri);
        } catch {
            await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus });
        }
    }

    dispose(): void {
        this.registration.dispose();
        this.changed.dispose();
    }
}

/**
 * `Crystal: Score selection against reference…`: scores the selection (or the whole file) with
 * BLEU and CrystalBLEU against code from a file, the clipboard, or the best matches in the
 * workspace index; shows the scores and highlights the shared non-trivial n-grams.
 */
import * as vscode from 'vscode';
import { bestReference, baseName, formatRange, scoreReportMarkdown, scoreSummary } from '../core/format';
import { SCORE_REQUEST, ScoreResult } from '../core/protocol';
import { buildScoreParams, ReferenceChoice } from '../core/reference';
import type { E2EDump } from '../e2eDump';
import { registerGuarded } from '../guard';
import type { MatchHighlighter } from '../highlights';
import type { Reports } from '../reports';
import type { ServerManager } from '../server';

/** Programmatic use (keybindings, tests): `{ "reference": "workspace" | "clipboard" | { "uri": "…" } }`. */
export interface ScoreCommandArgs {
    reference?: 'workspace' | 'clipboard' | { uri: string };
}

interface SourceItem extends vscode.QuickPickItem {
    id: 'workspace' | 'file' | 'folder' | 'editor' | 'clipboard';
}

async function pickReference(editor: vscode.TextEditor, args: ScoreCommandArgs | undefined): Promise<ReferenceChoice | undefined> {
    const given = args?.reference;
    if (given === 'workspace') {
        return { kind: 'workspace' };
    }
    if (given === 'clipboard') {
        return { kind: 'clipboard', text: await vscode.env.clipboard.readText() };
    }
    if (given && typeof given === 'object' && typeof given.uri === 'string') {
        return { kind: 'file', uri: given.uri };
    }

    const others = otherDocuments(editor);
    const items: SourceItem[] = [
        { id: 'workspace', label: '$(search) Best matches in the workspace', detail: 'Compare with the most similar code in the workspace index' },
        { id: 'file', label: '$(file-code) A file…', detail: 'Pick a file; its best-matching regions are the references' },
        { id: 'folder', label: '$(folder) A folder…', detail: 'Pick a folder of the workspace; its best-matching regions are the references' },
    ];
    if (others.length > 0) {
        items.push({ id: 'editor', label: '$(files) An open editor…', detail: 'Its selection, or the whole document when nothing is selected' });
    }
    items.push({ id: 'clipboard', label: '$(clippy) The clipboard', detail: 'Code you copied, e.g. a reference solution' });
    const chosen = await vscode.window.showQuickPick(items, {
        title: 'Crystal: score against…',
        placeHolder: 'Where is the reference code?',
        ignoreFocusOut: true,
    });
    switch (chosen?.id) {
        case undefined:
            return undefined;
        case 'workspace':
            return { kind: 'workspace' };
        case 'clipboard':
            return { kind: 'clipboard', text: await vscode.env.clipboard.readText() };
        case 'file': {
            const picked = await vscode.window.showOpenDialog({
                title: 'Reference file',
                canSelectMany: false,
                canSelectFolders: false,
                defaultUri: vscode.workspace.getWorkspaceFolder(editor.document.uri)?.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri,
                openLabel: 'Score against this file',
            });
            return picked?.[0] ? { kind: 'file', uri: picked[0].toString() } : undefined;
        }
        case 'folder': {
            const picked = await vscode.window.showOpenDialog({
                title: 'Reference folder',
                canSelectMany: false,
                canSelectFiles: false,
                canSelectFolders: true,
                defaultUri: vscode.workspace.getWorkspaceFolder(editor.document.uri)?.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri,
                openLabel: 'Score against this folder',
            });
            return picked?.[0] ? { kind: 'file', uri: picked[0].toString() } : undefined;
        }
        case 'editor': {
            const pick = await vscode.window.showQuickPick(
                others.map((d) => ({ label: baseName(d.uri.path), description: vscode.workspace.asRelativePath(d.uri), doc: d })),
                { title: 'Crystal: reference editor', ignoreFocusOut: true },
            );
            if (!pick) {
                return undefined;
            }
            const visible = vscode.window.visibleTextEditors.find((e) => e.document === pick.doc);
            const sel = visible && !visible.selection.isEmpty ? visible.selection : undefined;
            return {
                kind: 'file',
                uri: pick.doc.uri.toString(),
                range: sel ? { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } } : undefined,
            };
        }
    }
}

function otherDocuments(editor: vscode.TextEditor): vscode.TextDocument[] {
    return vscode.workspace.textDocuments.filter(
        (d) => d !== editor.document && (d.uri.scheme === 'file' || d.uri.scheme === 'untitled') && !d.isClosed,
    );
}

export function registerScoreCommand(
    server: ServerManager,
    highlighter: MatchHighlighter,
    reports: Reports,
    dump: E2EDump | undefined,
): vscode.Disposable {
    return registerGuarded('crystalLsp.scoreSelection', async (args?: ScoreCommandArgs) => {
        const editor = vscode.window.activeTextEditor;
        if (!editor) {
            void vscode.window.showWarningMessage('Crystal: open a file and select the code to score first.');
            return undefined;
        }
        const client = await server.running();
        const choice = await pickReference(editor, args);
        if (!choice) {
            return undefined;
        }
        const sel = editor.selection;
        const range = sel.isEmpty
            ? undefined
            : { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } };
        const metrics = vscode.workspace.getConfiguration('crystalLsp', editor.document.uri).get<string[]>('scoreMetrics', []);
        const params = buildScoreParams({ uri: editor.document.uri.toString(), range, languageId: editor.document.languageId }, choice, metrics);
        const result = await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Window, title: 'Crystal: scoring…' },
            () => client.sendRequest<ScoreResult>(SCORE_REQUEST, params),
        );
        const hypothesisUri = editor.document.uri.toString();
        const shown = highlighter.show(result, hypothesisUri);
        const label = baseName(editor.document.uri.path) + formatRange(range);
        const summary = scoreSummary(result);
        dump?.write('score.json', { params, result, summary, highlights: shown });
        const lines = formatRange(range);
        const title = baseName(editor.document.uri.path) + (lines ? ` (line${lines.includes('-') ? 's' : ''} ${lines.slice(1)})` : '');
        void showSummary(summary, result, label, title, reports, highlighter);
        return result;
    });
}

async function showSummary(
    summary: string,
    result: ScoreResult,
    label: string,
    title: string,
    reports: Reports,
    highlighter: MatchHighlighter,
): Promise<void> {
    const best = bestReference(result);
    const buttons = ['Details'];
    if (best?.uri) {
        buttons.push('Open Best Match');
    }
    buttons.push('Clear Highlights');
    const answer = await vscode.window.showInformationMessage(`Crystal: ${summary}`, ...buttons);
    if (answer === 'Details') {
        await reports.open(`Score of ${title}`, scoreReportMarkdown(result, label));
    } else if (answer === 'Open Best Match' && best?.uri) {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(best.uri));
        const range = best.range
            ? new vscode.Range(best.range.start.line, best.range.start.character, best.range.end.line, best.range.end.character)
            : undefined;
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, selection: range, preserveFocus: false });
    } else if (answer === 'Clear Highlights') {
        highlighter.clear();
    }
}

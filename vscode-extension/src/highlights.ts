/**
 * Editor decorations for the n-grams a scored selection shares with its references. They follow
 * the documents (re-applied when an editor becomes visible) and go away on edit or on
 * `Crystal: Clear match highlights`.
 */
import * as vscode from 'vscode';
import { computeHighlights, Span, spanHoverMarkdown } from './core/highlights';
import type { Range, ScoreResult } from './core/protocol';

const CONTEXT_KEY = 'crystalLsp.hasHighlights';

function toRange(r: Range): vscode.Range {
    return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

export class MatchHighlighter implements vscode.Disposable {
    private readonly decoration = vscode.window.createTextEditorDecorationType({
        backgroundColor: new vscode.ThemeColor('crystalLsp.matchBackground'),
        overviewRulerColor: new vscode.ThemeColor('crystalLsp.matchBackground'),
        overviewRulerLane: vscode.OverviewRulerLane.Center,
        rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
    });
    private readonly byUri = new Map<string, Span[]>();
    private readonly disposables: vscode.Disposable[] = [this.decoration];

    constructor() {
        this.disposables.push(
            vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.apply(e))),
            vscode.workspace.onDidChangeTextDocument((e) => {
                if (e.contentChanges.length > 0 && this.byUri.delete(e.document.uri.toString())) {
                    this.refresh();
                }
            }),
        );
    }

    /** Shows the matches of `result`, replacing earlier ones. Returns the number of spans per side. */
    show(result: ScoreResult, hypothesisUri: string): { hypothesisSpans: number; referenceSpans: number; ngrams: number } {
        const h = computeHighlights(result);
        this.byUri.clear();
        this.byUri.set(hypothesisUri, h.hypothesis);
        let referenceSpans = 0;
        for (const [uri, spans] of h.references) {
            if (uri === hypothesisUri) {
                // A reference elsewhere in the same file: show both sides.
                this.byUri.set(uri, [...h.hypothesis, ...spans]);
            } else {
                this.byUri.set(uri, spans);
            }
            referenceSpans += spans.length;
        }
        this.refresh();
        return { hypothesisSpans: h.hypothesis.length, referenceSpans, ngrams: h.ngramCount };
    }

    clear(): void {
        this.byUri.clear();
        this.refresh();
    }

    private refresh(): void {
        void vscode.commands.executeCommand('setContext', CONTEXT_KEY, this.byUri.size > 0);
        vscode.window.visibleTextEditors.forEach((e) => this.apply(e));
    }

    private apply(editor: vscode.TextEditor): void {
        const spans = this.byUri.get(editor.document.uri.toString()) ?? [];
        editor.setDecorations(
            this.decoration,
            spans.map((s) => ({ range: toRange(s.range), hoverMessage: new vscode.MarkdownString(spanHoverMarkdown(s)) })),
        );
    }

    dispose(): void {
        this.disposables.forEach((d) => d.dispose());
    }
}

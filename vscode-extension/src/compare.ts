/**
 * The editor's own diff view on two copies: `crystal.compare` (the lens of an inserted block, the
 * *Compare with the other copy* quick fix, the hover's link) opens `vscode.diff` on two read-only
 * virtual documents holding the two ranges, the other copy on the left. The server reads the
 * ranges (open buffers first) and answers their texts; when that fails, the server's own answer
 * to the command, going to the other copy, is the fallback. The hover's link passes only `{id}`
 * (the server looks the ranges up), lenses and quick fixes the ranges themselves.
 *
 * A renamed copy differs from its original on nearly every line: the server answers the renaming
 * too, and the right side is shown with the copy's names turned back into the original's
 * (`right.mapped`), both sides under the same comment listing the renaming (`header`), so the diff
 * shows only what differs beyond the renaming.
 */
import * as vscode from 'vscode';
import { baseName } from './core/format';
import type { CompareResult, CompareSpec } from './core/protocol';
import type { E2EDump } from './e2eDump';

export const COMPARE_SCHEME = 'crystal-lsp-compare';

/** The virtual document of one side: a fresh folder per comparison, the file's own name (its language). */
export function compareUri(n: number, side: 'left' | 'right', fileUri: string): vscode.Uri {
    return vscode.Uri.from({ scheme: COMPARE_SCHEME, path: `/${n}/${side}/${baseName(fileUri) || side}` });
}

export class CompareView implements vscode.TextDocumentContentProvider, vscode.Disposable {
    private readonly contents = new Map<string, string>();
    private counter = 0;
    private readonly registration = vscode.workspace.registerTextDocumentContentProvider(COMPARE_SCHEME, this);

    constructor(
        private readonly log: vscode.LogOutputChannel,
        private readonly dump?: E2EDump,
    ) {}

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.contents.get(uri.toString()) ?? '';
    }

    /**
     * Opens the diff of `spec`; `ask(args)` sends `crystal.compare` to the server. Falls back to the
     * server's go-to when the texts cannot be had.
     */
    async open(spec: CompareSpec, ask: (args: unknown[]) => Promise<unknown>): Promise<unknown> {
        let result: CompareResult;
        try {
            result = (await ask([{ ...spec, goTo: false }])) as CompareResult;
        } catch (e) {
            this.log.warn(`crystal.compare: ${e instanceof Error ? e.message : String(e)}; going to the other copy instead`);
            return ask([spec]);
        }
        const n = ++this.counter;
        const left = compareUri(n, 'left', result.left.uri);
        const right = compareUri(n, 'right', result.right.uri);
        const header = result.header ?? '';
        this.contents.set(left.toString(), header + result.left.text);
        this.contents.set(right.toString(), header + (result.right.mapped ?? result.right.text));
        if (this.contents.size > 40) {
            // keep the last 20 comparisons
            const keys = [...this.contents.keys()];
            keys.slice(0, keys.length - 40).forEach((k) => this.contents.delete(k));
        }
        const renamed = result.renaming?.length ?? 0;
        const title = renamed ? `${result.title} (${renamed} renamed, shown as the original's)` : result.title;
        await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
        this.dump?.write('compare.json', { spec, result, left: left.toString(), right: right.toString() });
        return result;
    }

    dispose(): void {
        this.registration.dispose();
        this.contents.clear();
    }
}

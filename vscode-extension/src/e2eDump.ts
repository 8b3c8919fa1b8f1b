/**
 * API-level readout for end-to-end tests. When `CRYSTAL_LSP_E2E_DUMP` names a directory, the
 * extension writes what it sees there as JSON: every diagnostic (with related locations), each
 * score result, status changes and lifecycle events. Inert otherwise.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

export class E2EDump implements vscode.Disposable {
    private readonly disposables: vscode.Disposable[] = [];
    private timer: NodeJS.Timeout | undefined;

    private constructor(private readonly dir: string) {
        fs.mkdirSync(dir, { recursive: true });
        this.disposables.push(vscode.languages.onDidChangeDiagnostics(() => this.scheduleDiagnostics()));
        this.event({ event: 'activated', vscode: vscode.version, pid: process.pid });
    }

    static fromEnv(): E2EDump | undefined {
        const dir = process.env.CRYSTAL_LSP_E2E_DUMP;
        return dir ? new E2EDump(dir) : undefined;
    }

    write(name: string, data: unknown): void {
        const file = path.join(this.dir, name);
        fs.writeFileSync(`${file}.tmp`, JSON.stringify(data, null, 2));
        fs.renameSync(`${file}.tmp`, file);
    }

    event(data: Record<string, unknown>): void {
        fs.appendFileSync(path.join(this.dir, 'events.jsonl'), JSON.stringify({ time: new Date().toISOString(), ...data }) + '\n');
    }

    private scheduleDiagnostics(): void {
        if (this.timer) {
            clearTimeout(this.timer);
        }
        this.timer = setTimeout(() => this.writeDiagnostics(), 200);
    }

    private writeDiagnostics(): void {
        const range = (r: vscode.Range) => ({
            start: { line: r.start.line, character: r.start.character },
            end: { line: r.end.line, character: r.end.character },
        });
        const all = vscode.languages
            .getDiagnostics()
            .map(([uri, diags]) => ({
                uri: uri.toString(),
                diagnostics: diags.map((d) => ({
                    message: d.message,
                    source: d.source,
                    code: typeof d.code === 'object' ? d.code.value : d.code,
                    severity: vscode.DiagnosticSeverity[d.severity],
                    range: range(d.range),
                    relatedInformation: (d.relatedInformation ?? []).map((ri) => ({
                        uri: ri.location.uri.toString(),
                        range: range(ri.location.range),
                        message: ri.message,
                    })),
                })),
            }))
            .filter((e) => e.diagnostics.length > 0);
        this.write('diagnostics.json', all);
    }

    dispose(): void {
        if (this.timer) {
            clearTimeout(this.timer);
        }
        this.disposables.forEach((d) => d.dispose());
    }
}

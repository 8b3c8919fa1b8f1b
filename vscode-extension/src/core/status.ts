/**
 * The status bar item's text and tooltip from the client's and the server's state.
 */

export type ClientPhase =
    | 'starting'
    | 'installing'
    | 'running'
    | 'stopped'
    | 'needsInstall'
    | 'failed';

export interface StatusInput {
    phase: ClientPhase;
    /** From the server's `crystal/status` notification, while running. */
    server?: { state: 'indexing' | 'ready' | 'error'; message?: string; files?: number };
    enabled: boolean;
    /** Near-duplicate diagnostics in the active editor; undefined when no editor is active. */
    duplicates?: number;
    /** Whether the server has published diagnostics of the active file since it (re)started. */
    checked?: boolean;
    /** Extra tooltip line, e.g. the interpreter. */
    detail?: string;
}

export interface StatusView {
    text: string;
    tooltip: string;
    kind: 'normal' | 'warning' | 'error';
}

function plural(n: number, one: string, many: string): string {
    return `${n} ${n === 1 ? one : many}`;
}

export function statusView(input: StatusInput): StatusView {
    const tip: string[] = [];
    let text: string;
    let kind: StatusView['kind'] = 'normal';
    switch (input.phase) {
        case 'starting':
            text = '$(loading~spin) Crystal';
            tip.push('Starting the CrystalBLEU language server…');
            break;
        case 'installing':
            text = '$(loading~spin) Crystal: installing';
            tip.push('Installing the CrystalBLEU language server…');
            break;
        case 'needsInstall':
            text = '$(warning) Crystal: not installed';
            tip.push('The selected Python cannot run the language server. Click to install it.');
            kind = 'warning';
            break;
        case 'failed':
            text = '$(error) Crystal';
            tip.push('The language server is not running. Click for the log and a restart.');
            kind = 'error';
            break;
        case 'stopped':
            text = '$(circle-slash) Crystal';
            tip.push('The language server is stopped.');
            break;
        case 'running': {
            const s = input.server;
            if (s?.state === 'indexing') {
                // 0 before the file list is known: say nothing rather than "indexing 0 files"
                const files = s.files ? ` ${plural(s.files, 'file', 'files')}` : '';
                text = `$(sync~spin) Crystal: indexing${files}`;
                tip.push(s.message || 'Indexing the workspace…');
            } else if (s?.state === 'error') {
                text = '$(error) Crystal';
                tip.push(s.message || 'The server reported an error; see the log.');
                kind = 'error';
            } else if (!input.enabled) {
                text = '$(circle-slash) Crystal: off';
                tip.push('Near-duplicate diagnostics are off (crystalLsp.enable).');
            } else if (input.duplicates === undefined) {
                text = '$(check) Crystal';
                tip.push(s?.files !== undefined ? `Index: ${plural(s.files, 'file', 'files')}.` : 'Ready.');
            } else if (input.duplicates === 0 && input.checked === false) {
                text = '$(check) Crystal';
                tip.push('This file has not been checked since the server started.');
            } else if (input.duplicates === 0) {
                text = '$(check) Crystal: no duplicates';
                tip.push('No near-duplicates in this file.');
            } else {
                text = `$(copy) Crystal: ${plural(input.duplicates, 'duplicate', 'duplicates')}`;
                tip.push(`${plural(input.duplicates, 'near-duplicate', 'near-duplicates')} in this file (see the Problems panel).`);
                kind = 'warning';
            }
            if (s?.state !== 'indexing' && s?.files !== undefined && input.duplicates !== undefined) {
                tip.push(`Index: ${plural(s.files, 'file', 'files')}.`);
            }
            break;
        }
    }
    if (input.detail) {
        tip.push(input.detail);
    }
    return { text, tooltip: tip.join('\n'), kind };
}

/**
 * The server's stderr is its log. vscode-languageclient would log every stderr line as an
 * error; we read the level from the line instead (Python logging's usual formats) so the
 * output channel's level filter works. Traceback lines keep the level of the record they follow.
 */
export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const LEVEL_WORD = /(?:^|[\s[(|:-])(CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG|TRACE)(?=$|[\s\]):|-])/;

function fromWord(word: string): Level {
    switch (word) {
        case 'CRITICAL':
        case 'FATAL':
        case 'ERROR':
            return 'error';
        case 'WARNING':
        case 'WARN':
            return 'warn';
        case 'DEBUG':
            return 'debug';
        case 'TRACE':
            return 'trace';
        default:
            return 'info';
    }
}

/** `2026-11-21 07:32:00,261 INFO ` (the server's format): the output channel adds its own. */
const TIMESTAMP_LEVEL = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d+)?\s+(?:CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG|TRACE)\s+/;

/** The line without a leading timestamp-and-level prefix (the level is kept by `level()`). */
export function stripPrefix(line: string): string {
    return line.replace(TIMESTAMP_LEVEL, '');
}

export class StderrClassifier {
    private last: Level = 'info';

    level(line: string): Level {
        if (/^Traceback \(most recent call last\):/.test(line)) {
            this.last = 'error';
            return 'error';
        }
        if (/^\s/.test(line) || /^[A-Za-z_][\w.]*(Error|Exception|Warning|Interrupt|Exit)\b/.test(line)) {
            return this.last; // continuation of the previous record
        }
        const m = LEVEL_WORD.exec(line.slice(0, 80));
        this.last = m ? fromWord(m[1]) : 'info';
        return this.last;
    }
}

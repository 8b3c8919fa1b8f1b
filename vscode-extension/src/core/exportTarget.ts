/**
 * Where `Crystal: Export inserted code as JSONL…` may write without asking: a new file inside a
 * workspace folder. Outside every folder (a path a command argument gave), or over an existing
 * file, the user is asked first.
 */
import * as path from 'node:path';

/** Whether `target` is `folder` or inside it (absolute paths). */
export function isInside(target: string, folder: string): boolean {
    const rel = path.relative(path.resolve(folder), path.resolve(target));
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The question to ask before writing the export to `target` (a file path; undefined for a URI
 * that is not a file), or undefined when it may be written as is.
 */
export function exportQuestion(target: string | undefined, folders: string[], exists: boolean): string | undefined {
    const where = target ?? 'a location that is not a file';
    const outside = target === undefined || !folders.some((f) => isInside(target, f));
    if (outside && exists) {
        return `Overwrite ${where}, outside the workspace, with the inserted code?`;
    }
    if (outside) {
        return `Write the inserted code to ${where}, outside the workspace?`;
    }
    return exists ? `Overwrite ${where} with the inserted code?` : undefined;
}

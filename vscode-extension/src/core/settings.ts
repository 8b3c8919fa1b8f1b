/**
 * `crystalLsp.*` settings: defaults, and the mapping from what VS Code stores to what the server
 * reads (`initializationOptions.settings` and `workspace/configuration` section `crystalLsp`).
 *
 * The server only ever sees {@link ServerSettings}: client-only keys (interpreter, install policy,
 * trace) are dropped, `kAuto` becomes `k: "auto"`, and malformed values (settings.json is free
 * text) fall back to the defaults with a note for the log instead of reaching the server.
 */

export const SECTION = 'crystalLsp';

export type Severity = 'hint' | 'information' | 'warning' | 'error';
export const SEVERITIES: readonly Severity[] = ['hint', 'information', 'warning', 'error'];

/** What a diagnostic underlines: the copy's aligned range (a unit copied whole: its header line), or its first line only. */
export type Underline = 'range' | 'firstLine';
export const UNDERLINES: readonly Underline[] = ['range', 'firstLine'];

export interface ServerSettings {
    enable: boolean;
    threshold: number;
    k: number | 'auto';
    minTokens: number;
    minLines: number;
    severity: Severity;
    underline: Underline;
    languages: string[];
    exclude: string[];
    debounceMs: number;
    maxFileBytes: number;
    referencesOutsideWorkspace: boolean;
    showSimilar: boolean;
    maxDiagnostics: number;
    insertions: boolean;
    insertionMinLines: number;
    insertionThreshold: number;
    insertionDiagnostics: boolean;
    insertionLensSeconds: number;
}

export const DEFAULT_SETTINGS: Readonly<ServerSettings> = Object.freeze({
    enable: true,
    threshold: 0.6,
    k: 500,
    minTokens: 50,
    minLines: 5,
    severity: 'information',
    underline: 'range',
    languages: [],
    exclude: [],
    debounceMs: 300,
    maxFileBytes: 2_000_000,
    referencesOutsideWorkspace: false,
    showSimilar: false,
    maxDiagnostics: 20,
    insertions: true,
    insertionMinLines: 3,
    insertionThreshold: 0.6,
    insertionDiagnostics: false,
    insertionLensSeconds: 120,
});

/** A numeric setting's range, in the words of `package.json` (JSON schema). */
export interface Limits {
    minimum?: number;
    exclusiveMinimum?: number;
    maximum: number;
}

/**
 * The ranges of the numeric settings, as `package.json` declares them and the server checks
 * them (both are derived from the server's one settings table; tests compare all three).
 */
type NumericKey =
    | 'threshold'
    | 'k'
    | 'minTokens'
    | 'minLines'
    | 'debounceMs'
    | 'maxFileBytes'
    | 'maxDiagnostics'
    | 'insertionMinLines'
    | 'insertionThreshold'
    | 'insertionLensSeconds';
export const LIMITS: Readonly<Record<NumericKey, Limits>> = Object.freeze({
    threshold: { exclusiveMinimum: 0, maximum: 1 },
    k: { minimum: 0, maximum: 10_000_000 },
    minTokens: { minimum: 1, maximum: 1_000_000 },
    minLines: { minimum: 1, maximum: 100_000 },
    debounceMs: { minimum: 0, maximum: 60_000 },
    maxFileBytes: { minimum: 0, maximum: 1_099_511_627_776 }, // 2 ** 40
    maxDiagnostics: { minimum: 1, maximum: 100_000 },
    insertionMinLines: { minimum: 1, maximum: 100_000 },
    insertionThreshold: { exclusiveMinimum: 0, maximum: 1 },
    insertionLensSeconds: { minimum: 0, maximum: 86_400 },
});

/** Settings the extension itself consumes; changing one of the first two restarts the server. */
export const RESTART_KEYS = ['interpreter', 'installIfMissing'] as const;
export const CLIENT_ONLY_KEYS = ['interpreter', 'installIfMissing', 'trace', 'kAuto'] as const;

export type InstallPolicy = 'ask' | 'always' | 'never';

export interface Mapped {
    settings: ServerSettings;
    /** One line per value that was ignored, e.g. `crystalLsp.threshold: 7 is not in (0, 1]; using 0.6`. */
    problems: string[];
}

type Raw = Record<string, unknown>;

function isRecord(value: unknown): value is Raw {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Maps the raw `crystalLsp` configuration object to the server's settings. */
export function toServerSettings(raw: unknown): Mapped {
    const problems: string[] = [];
    const src: Raw = isRecord(raw) ? raw : {};
    const d = DEFAULT_SETTINGS;

    const bad = (key: string, value: unknown, why: string, fallback: unknown): void => {
        problems.push(`${SECTION}.${key}: ${JSON.stringify(value)} ${why}; using ${JSON.stringify(fallback)}`);
    };

    const bool = (key: keyof ServerSettings, fallback: boolean): boolean => {
        const v = src[key];
        if (v === undefined || v === null) {
            return fallback;
        }
        if (typeof v === 'boolean') {
            return v;
        }
        bad(key, v, 'is not true or false', fallback);
        return fallback;
    };

    const int = (key: NumericKey, fallback: number): number => {
        const v = src[key];
        if (v === undefined || v === null) {
            return fallback;
        }
        const { minimum = 0, maximum } = LIMITS[key];
        if (typeof v !== 'number' || !Number.isInteger(v) || v < minimum) {
            bad(key, v, `is not an integer >= ${minimum}`, fallback);
            return fallback;
        }
        if (v > maximum) {
            bad(key, v, `is not an integer <= ${maximum}`, fallback);
            return fallback;
        }
        return v;
    };

    const strings = (key: keyof ServerSettings): string[] => {
        const v = src[key];
        if (v === undefined || v === null) {
            return [];
        }
        if (Array.isArray(v) && v.every((x) => typeof x === 'string')) {
            return v.map((x: string) => x.trim()).filter((x) => x.length > 0);
        }
        bad(key, v, 'is not a list of strings', []);
        return [];
    };

    const fraction = (key: 'threshold' | 'insertionThreshold', fallback: number): number => {
        const v = src[key];
        const { exclusiveMinimum: above = 0, maximum: atMost } = LIMITS[key];
        if (v === undefined || v === null) {
            return fallback;
        }
        if (typeof v === 'number' && Number.isFinite(v) && v > above && v <= atMost) {
            return v;
        }
        bad(key, v, `is not a number in (${above}, ${atMost}]`, fallback);
        return fallback;
    };
    const threshold = fraction('threshold', d.threshold);

    const kAuto = src.kAuto;
    if (kAuto !== undefined && kAuto !== null && typeof kAuto !== 'boolean') {
        bad('kAuto', kAuto, 'is not true or false', false);
    }
    const k: number | 'auto' = kAuto === true || src.k === 'auto' ? 'auto' : int('k', d.k as number);

    const choice = <T extends string>(key: keyof ServerSettings, choices: readonly T[], fallback: T): T => {
        const v = src[key];
        if (v === undefined || v === null) {
            return fallback;
        }
        if (typeof v === 'string' && (choices as readonly string[]).includes(v)) {
            return v as T;
        }
        bad(key, v, `is not one of ${choices.join(', ')}`, fallback);
        return fallback;
    };
    const severity = choice('severity', SEVERITIES, d.severity);

    return {
        settings: {
            enable: bool('enable', d.enable),
            threshold,
            k,
            minTokens: int('minTokens', d.minTokens),
            minLines: int('minLines', d.minLines),
            severity,
            underline: choice('underline', UNDERLINES, d.underline),
            languages: strings('languages'),
            exclude: strings('exclude'),
            debounceMs: int('debounceMs', d.debounceMs),
            maxFileBytes: int('maxFileBytes', d.maxFileBytes),
            referencesOutsideWorkspace: bool('referencesOutsideWorkspace', d.referencesOutsideWorkspace),
            showSimilar: bool('showSimilar', d.showSimilar),
            maxDiagnostics: int('maxDiagnostics', d.maxDiagnostics),
            insertions: bool('insertions', d.insertions),
            insertionMinLines: int('insertionMinLines', d.insertionMinLines),
            insertionThreshold: fraction('insertionThreshold', d.insertionThreshold),
            insertionDiagnostics: bool('insertionDiagnostics', d.insertionDiagnostics),
            insertionLensSeconds: int('insertionLensSeconds', d.insertionLensSeconds),
        },
        problems,
    };
}

/** `crystalLsp.installIfMissing`, tolerating junk. */
export function installPolicy(raw: unknown): InstallPolicy {
    return raw === 'always' || raw === 'never' ? raw : 'ask';
}

/** `crystalLsp.interpreter`: a command line; a lone string is accepted too. Empty entries dropped. */
export function interpreterSetting(raw: unknown): string[] {
    if (typeof raw === 'string') {
        return raw.trim() ? [raw.trim()] : [];
    }
    if (Array.isArray(raw)) {
        return raw.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter((x) => x.length > 0);
    }
    return [];
}

/**
 * Owns the language client: finds Python, checks it, installs the server when allowed, starts
 * `python -m crystal_lsp serve`, and restarts it (one restart at a time) when the interpreter
 * changes or the user asks.
 */
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import type { Readable } from 'node:stream';
import * as vscode from 'vscode';
import {
    CloseAction,
    DidChangeConfigurationNotification,
    ErrorAction,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
    State,
} from 'vscode-languageclient/node';
import { Level, StderrClassifier, stripPrefix } from './core/logLevel';
import { CMD_COMPARE, STATUS_NOTIFICATION, StatusParams } from './core/protocol';
import {
    Decision,
    describeSource,
    decide,
    formatVersion,
    installSteps,
    Interpreter,
    InterpreterSource,
    privateEnvDir,
    Probe,
    venvPython,
} from './core/python';
import { Coalescer, CrashPolicy } from './core/serial';
import { installPolicy, SECTION, toServerSettings } from './core/settings';
import type { E2EDump } from './e2eDump';
import { findInterpreter, hasPythonExtension, probe, serverCwd, serverEnv } from './python';
import { bundledWheel, BundledWheel, runInstall } from './setup';
import type { StatusBar } from './statusBar';

export const CLIENT_ID = SECTION; // makes vscode-languageclient read `crystalLsp.trace.server`
const CLIENT_NAME = 'Crystal LSP';

interface Launch {
    command: string[];
    source: InterpreterSource;
    probe: Probe;
}

export class ServerNotRunning extends Error {}

export class ServerManager implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private launch: Launch | undefined;
    private stopping = false;
    private installRequested = false;
    /** Interpreters for which the user answered "Not now" this session. */
    private readonly declined = new Set<string>();
    private readonly restarts = new Coalescer(() => this.doRestart());
    private readonly bundled: BundledWheel | undefined;
    private readonly startedEmitter = new vscode.EventEmitter<LanguageClient>();
    readonly onDidStart = this.startedEmitter.event;
    /** Handles a server command in the client instead (undefined: send it to the server); `ask` sends it. */
    interceptCommand: ((command: string, args: unknown[], ask: (args: unknown[]) => Promise<unknown>) => Promise<unknown> | undefined) | undefined;

    constructor(
        private readonly context: vscode.ExtensionContext,
        private readonly log: vscode.LogOutputChannel,
        private readonly status: StatusBar,
        private readonly dump?: E2EDump,
    ) {
        this.bundled = bundledWheel(context.extensionPath);
    }

    /** Restarts the server; coalesces with restarts already waiting. */
    restart(reason: string): Promise<void> {
        this.log.info(`Restart requested: ${reason}`);
        return this.restarts.request();
    }

    /** `Crystal: Restart server`: also forgets earlier "Not now" answers. */
    userRestart(): Promise<void> {
        this.declined.clear();
        return this.restart('command');
    }

    /** Installs the server into the interpreter (no question asked), then starts it. */
    install(): Promise<void> {
        this.installRequested = true;
        return this.restart('install');
    }

    /** The running client, waiting for a restart in progress; throws ServerNotRunning. */
    async running(): Promise<LanguageClient> {
        await this.restarts.idle();
        if (this.client && this.client.isRunning()) {
            return this.client;
        }
        throw new ServerNotRunning('The Crystal language server is not running.');
    }

    get interpreterDescription(): string | undefined {
        if (!this.launch) {
            return undefined;
        }
        return `${this.launch.command.join(' ')} (Python ${formatVersion(this.launch.probe.version)}, from ${describeSource(this.launch.source)})`;
    }

    private async doRestart(): Promise<void> {
        await this.stopClient();
        const forceInstall = this.installRequested;
        this.installRequested = false;
        this.status.setPhase('starting');

        let base: Interpreter;
        let baseProbe: Probe;
        try {
            base = await findInterpreter();
            this.log.info(`Python: ${base.command.join(' ')} (from ${describeSource(base.source)})`);
            baseProbe = await probe(base.command);
        } catch (e) {
            this.fail(`Cannot run Python: ${errorMessage(e)}`, true);
            return;
        }
        this.log.info(
            `Python ${formatVersion(baseProbe.version)} at ${baseProbe.executable}; crystal-lsp ${baseProbe.crystal ?? 'not installed'}` +
                (baseProbe.serverError ? ` (${baseProbe.serverError})` : ''),
        );

        let launch: Launch = { command: base.command, source: base.source, probe: baseProbe };
        let decision = decide(baseProbe, this.bundled?.version);
        if (decision.kind === 'install' && decision.target === 'privateEnv') {
            const existing = await this.privateEnv(baseProbe);
            if (existing) {
                launch = existing.launch;
                decision = existing.decision;
            }
        }

        if (decision.kind === 'tooOld') {
            this.fail(
                `${launch.command.join(' ')} is Python ${decision.version}; the Crystal language server needs Python 3.10 or newer. ` +
                    'Choose another interpreter.',
                true,
            );
            return;
        }

        if (decision.kind === 'install' && (forceInstall || !decision.optional)) {
            const policy = installPolicy(vscode.workspace.getConfiguration(SECTION).get('installIfMissing'));
            const key = launch.command.join(' ');
            if (!forceInstall && policy === 'never') {
                this.fail(
                    `${key} cannot run the Crystal language server (${decision.reason === 'missing' ? 'crystal-lsp is not installed' : launch.probe.serverError ?? 'broken install'}). ` +
                        'Install it with `python -m pip install crystal-lsp`, or allow the extension to do it (crystalLsp.installIfMissing).',
                    true,
                );
                return;
            }
            if (!forceInstall && policy === 'ask') {
                this.status.setPhase('needsInstall', `Python: ${key}`);
                this.dump?.event({ event: 'needsInstall', python: key, reason: decision.reason, target: decision.target });
                if (!this.declined.has(key)) {
                    void this.askInstall(launch, decision);
                }
                return;
            }
            const installed = await this.runInstall(launch, decision);
            if (!installed) {
                return;
            }
            launch = installed;
        } else if (decision.kind === 'install' && decision.optional) {
            void this.offerUpdate(launch);
        }
        await this.startClient(launch);
    }

    /** A working private environment previously built from this base interpreter, if any. */
    private async privateEnv(baseProbe: Probe): Promise<{ launch: Launch; decision: Decision } | undefined> {
        const python = venvPython(privateEnvDir(this.storageDir(), baseProbe.executable), process.platform);
        if (!fs.existsSync(python)) {
            return undefined;
        }
        try {
            const p = await probe([python]);
            const d = decide(p, this.bundled?.version);
            this.log.info(`Private environment ${python}: crystal-lsp ${p.crystal ?? 'not installed'}`);
            if (d.kind === 'tooOld') {
                return undefined;
            }
            // Inside our own venv, any install is in place.
            const decision: Decision = d.kind === 'install' ? { ...d, target: 'inPlace' } : d;
            return { launch: { command: [python], source: 'private', probe: p }, decision };
        } catch (e) {
            this.log.warn(`Private environment ${python} is unusable: ${errorMessage(e)}`);
            return undefined;
        }
    }

    private storageDir(): string {
        return this.context.globalStorageUri.fsPath;
    }

    private async askInstall(launch: Launch, decision: Extract<Decision, { kind: 'install' }>): Promise<void> {
        const key = launch.command.join(' ');
        const version = formatVersion(launch.probe.version);
        const what =
            decision.reason === 'missing'
                ? 'does not have the Crystal language server (the crystal-lsp package)'
                : `has an incomplete crystal-lsp (${launch.probe.serverError ?? 'import failed'})`;
        const where =
            decision.target === 'inPlace'
                ? `Install it into this environment`
                : `This Python is not a virtual environment, so the extension will create a private one from it and install there`;
        const source = this.bundled ? `the crystal-lsp ${this.bundled.version} wheel shipped with the extension` : 'crystal-lsp from your package index';
        const install = decision.target === 'inPlace' ? 'Install' : 'Create environment and install';
        const pick = hasPythonExtension() ? 'Select Interpreter…' : 'Choose Interpreter…';
        const answer = await vscode.window.showWarningMessage(
            `Crystal: ${key} (Python ${version}) ${what}. ${where} (${source}; dependencies such as pygls and numpy come from your package index)?`,
            install,
            pick,
            'Not now',
        );
        this.dump?.event({ event: 'installAnswer', answer: answer ?? null });
        if (answer === install) {
            await this.install();
        } else if (answer === pick) {
            await chooseInterpreter();
        } else {
            this.declined.add(key);
        }
    }

    private async offerUpdate(launch: Launch): Promise<void> {
        const key = launch.command.join(' ');
        if (this.declined.has(key) || !this.bundled) {
            return;
        }
        const answer = await vscode.window.showInformationMessage(
            `Crystal: ${key} has crystal-lsp ${launch.probe.crystal}; the extension ships ${this.bundled.version}. Update it?`,
            'Update',
            'Not now',
        );
        if (answer === 'Update') {
            await this.install();
        } else {
            this.declined.add(key);
        }
    }

    /** Installs; returns the launch to use afterwards, or undefined (failure already reported). */
    private async runInstall(launch: Launch, decision: Extract<Decision, { kind: 'install' }>): Promise<Launch | undefined> {
        const target = launch.source === 'private' ? 'inPlace' : decision.target;
        const envDir = privateEnvDir(this.storageDir(), launch.probe.executable);
        const plan = installSteps({
            python: launch.command,
            target,
            wheel: this.bundled?.path,
            envDir,
            platform: process.platform,
        });
        if (target === 'privateEnv') {
            fs.mkdirSync(envDir, { recursive: true });
        }
        this.status.setPhase('installing');
        this.dump?.event({ event: 'installStart', steps: plan.steps.map((s) => s.argv) });
        const t0 = Date.now();
        try {
            await runInstall(plan.steps, 'Crystal: installing the language server', this.log);
            const p = await probe(plan.resultPython);
            const d = decide(p, this.bundled?.version);
            if (d.kind !== 'run') {
                throw new Error(`after installing, ${plan.resultPython.join(' ')} still cannot import crystal_lsp.server (${p.serverError ?? d.kind})`);
            }
            const seconds = ((Date.now() - t0) / 1000).toFixed(1);
            this.log.info(`Installed crystal-lsp ${p.crystal} into ${plan.resultPython.join(' ')} in ${seconds} s`);
            this.dump?.event({ event: 'installDone', python: plan.resultPython, seconds: Number(seconds) });
            void vscode.window.showInformationMessage(`Crystal: installed crystal-lsp ${p.crystal ?? ''} into ${plan.resultPython.join(' ')}.`);
            return { command: plan.resultPython, source: target === 'privateEnv' ? 'private' : launch.source, probe: p };
        } catch (e) {
            if (e instanceof vscode.CancellationError) {
                this.log.warn('Installation cancelled.');
                this.status.setPhase('needsInstall');
                return undefined;
            }
            this.dump?.event({ event: 'installFailed', error: errorMessage(e) });
            this.fail(`Installing the Crystal language server failed: ${errorMessage(e)}`, true);
            return undefined;
        }
    }

    private async startClient(launch: Launch): Promise<void> {
        this.launch = launch;
        // The server logs at WARNING by default: -v (info) feeds the output channel, -vv (debug)
        // when the channel is at Debug or Trace ("Developer: Set Log Level…", then restart).
        const verbosity = this.log.logLevel !== vscode.LogLevel.Off && this.log.logLevel <= vscode.LogLevel.Debug ? '-vv' : '-v';
        const args = [...launch.command.slice(1), '-m', 'crystal_lsp', 'serve', verbosity];
        // No `transport`: with TransportKind.stdio the client would append `--stdio` to args.
        const serverOptions: ServerOptions = { command: launch.command[0], args, options: { cwd: serverCwd(), env: serverEnv() } };
        // Start failures are reported once, by us; crashes of a running server restart it a few times.
        let everRunning = false;
        const crashes = new CrashPolicy();
        const options = this.clientOptions();
        options.initializationFailedHandler = () => false;
        options.errorHandler = {
            error: (_error, _message, count) => ({ action: count && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true }),
            closed: () => {
                if (!everRunning || this.stopping) {
                    return { action: CloseAction.DoNotRestart, handled: true };
                }
                if (crashes.onCrash(Date.now()) === 'restart') {
                    this.log.warn('The server exited unexpectedly; restarting it.');
                    this.dump?.event({ event: 'crashed' });
                    return { action: CloseAction.Restart, handled: true };
                }
                this.fail('The Crystal language server crashed 5 times in 3 minutes and was not restarted.', false);
                return { action: CloseAction.DoNotRestart, handled: true };
            },
        };
        const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, options);
        client.onNotification(STATUS_NOTIFICATION, (p: StatusParams) => {
            this.status.setServerStatus(p);
            this.dump?.event({ event: 'status', ...p });
        });
        client.onDidChangeState((e) => {
            if (e.newState === State.Running) {
                everRunning = true;
                this.status.setPhase('running', `Python: ${this.interpreterDescription}`);
            } else if (e.newState === State.Stopped && !this.stopping) {
                this.status.setPhase('failed');
                this.dump?.event({ event: 'stopped' });
            }
        });
        this.client = client;
        this.log.info(`Starting: ${[launch.command[0], ...args].join(' ')}`);
        try {
            await client.start();
            this.status.setPhase('running', `Python: ${this.interpreterDescription}`);
            const info = client.initializeResult?.serverInfo;
            this.log.info(`Server ${info?.name ?? '?'} ${info?.version ?? ''} is running.`);
            this.dump?.event({ event: 'started', python: launch.command, source: launch.source, server: info ?? null });
            this.startedEmitter.fire(client);
        } catch (e) {
            this.client = undefined;
            try {
                await client.dispose(2000);
            } catch {
                // already dead
            }
            this.fail(`The Crystal language server did not start: ${errorMessage(e)}`, false);
        }
    }

    private clientOptions(): LanguageClientOptions {
        const folder = vscode.workspace.workspaceFolders?.[0];
        const mapped = toServerSettings(vscode.workspace.getConfiguration(SECTION, folder?.uri));
        mapped.problems.forEach((p) => this.log.warn(p));
        return {
            documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
            outputChannel: this.log,
            traceOutputChannel: this.log,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            diagnosticCollectionName: 'crystal',
            stdioOptions: { stdout: (input) => this.pipeLog(input), stderr: (input) => this.pipeLog(input) },
            initializationOptions: { settings: mapped.settings },
            // the hover's "compare" link runs crystal.compare, and nothing else
            markdown: { isTrusted: { enabledCommands: [CMD_COMPARE] } },
            middleware: {
                executeCommand: async (command, args, next) => {
                    const ask = async (a: unknown[]): Promise<unknown> => next(command, a);
                    const handled = this.interceptCommand?.(command, args, ask);
                    return handled !== undefined ? handled : next(command, args);
                },
                workspace: {
                    // Answer `workspace/configuration` for our section with the mapped settings.
                    configuration: async (params, token, next) => {
                        const result = await next(params, token);
                        if (!Array.isArray(result)) {
                            return result;
                        }
                        return params.items.map((item, i) => {
                            if (item.section !== SECTION) {
                                return result[i];
                            }
                            const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : folder?.uri;
                            const m = toServerSettings(vscode.workspace.getConfiguration(SECTION, scope));
                            m.problems.forEach((p) => this.log.warn(p));
                            return m.settings;
                        });
                    },
                    // The server registers for didChangeConfiguration; send it mapped settings too.
                    didChangeConfiguration: async () => {
                        const client = this.client;
                        if (!client) {
                            return;
                        }
                        const m = toServerSettings(vscode.workspace.getConfiguration(SECTION, folder?.uri));
                        await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: m.settings } });
                    },
                },
            },
        };
    }

    /** The server's log lines, at the level they state (not all as errors). */
    private pipeLog(input: Readable): void {
        const classifier = new StderrClassifier();
        const write: Record<Level, (line: string) => void> = {
            trace: (l) => this.log.trace(l),
            debug: (l) => this.log.debug(l),
            info: (l) => this.log.info(l),
            warn: (l) => this.log.warn(l),
            error: (l) => this.log.error(l),
        };
        readline
            .createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 })
            .on('line', (line) => write[classifier.level(line)](`[server] ${stripPrefix(line)}`));
    }

    private fail(message: string, offerInterpreter: boolean): void {
        this.log.error(message);
        this.status.setPhase('failed');
        this.dump?.event({ event: 'failed', message });
        const buttons = offerInterpreter ? ['Choose Interpreter…', 'Show Log'] : ['Show Log', 'Restart'];
        void vscode.window.showErrorMessage(`Crystal: ${message}`, ...buttons).then(async (answer) => {
            if (answer === 'Show Log') {
                this.log.show();
            } else if (answer === 'Restart') {
                await this.userRestart();
            } else if (answer === 'Choose Interpreter…') {
                await chooseInterpreter();
            }
        });
    }

    private async stopClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (!client) {
            return;
        }
        this.stopping = true;
        try {
            await client.dispose(3000);
        } catch (e) {
            this.log.warn(`Stopping the server: ${errorMessage(e)}`);
        } finally {
            this.stopping = false;
        }
        this.status.setPhase('stopped');
    }

    async dispose(): Promise<void> {
        await this.stopClient();
        this.startedEmitter.dispose();
    }
}

/** The Python extension's interpreter picker when that decides, else our setting. */
export async function chooseInterpreter(): Promise<void> {
    const setting = vscode.workspace.getConfiguration(SECTION).get<string[]>('interpreter') ?? [];
    if (hasPythonExtension() && setting.length === 0) {
        await vscode.commands.executeCommand('python.setInterpreter');
    } else {
        await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.interpreter`);
    }
}

export function errorMessage(e: unknown): string {
    return e instanceof Error ? e.message : String(e);
}

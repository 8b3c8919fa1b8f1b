/**
 * Runs restarts one at a time. Requests made while a run waits to start are coalesced into it,
 * so a burst of setting changes restarts the server once instead of racing several starts; a
 * request made while a run is in progress gets exactly one more run after it.
 */
export class Coalescer {
    private tail: Promise<void> = Promise.resolve();
    private queued: Promise<void> | undefined;

    constructor(private readonly task: () => Promise<void>) {}

    /** Resolves (or rejects) with the first run that starts after this call. */
    request(): Promise<void> {
        if (this.queued) {
            return this.queued;
        }
        const run = this.tail.then(async () => {
            this.queued = undefined;
            await this.task();
        });
        this.queued = run;
        this.tail = run.catch(() => undefined);
        return run;
    }

    /** Resolves when nothing is running or queued. */
    idle(): Promise<void> {
        return this.tail;
    }
}

/**
 * Crash policy of a running server: restart after a crash, but give up after `max` restarts
 * within `windowMs` (a server that crashes on every start would otherwise loop forever).
 */
export class CrashPolicy {
    private readonly crashes: number[] = [];

    constructor(
        private readonly max = 4,
        private readonly windowMs = 3 * 60 * 1000,
    ) {}

    onCrash(now: number): 'restart' | 'giveUp' {
        this.crashes.push(now);
        while (this.crashes.length > 0 && now - this.crashes[0] > this.windowMs) {
            this.crashes.shift();
        }
        return this.crashes.length <= this.max ? 'restart' : 'giveUp';
    }
}

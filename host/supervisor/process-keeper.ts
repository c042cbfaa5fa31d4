/**
 * @module host/supervisor/process-keeper
 * Keeps one sandbox process running for the host's sandbox: starts it (with back-off when it keeps
 * failing to start), and when it dies, strikes the plugins blamed for it and starts the next one.
 * While the host shuts down, a process that dies is not restarted, counted or blamed. Its methods
 * read in the order of a process's life: ensure → spawn → exit → close.
 */
import type { PluginIdentity } from '../../contracts/worker-protocol.js';
import type { ResolvedSandboxOptions } from './sandbox-options.js';
import { ChildHandle } from './child-handle.js';
import { pluginKey, pluginLabel, type StrikeSync } from './strike-sync.js';
import { fail } from '../../contracts/errors.js';

const START_TIMEOUT_MS = 20_000;
const MAX_START_ATTEMPTS = 5;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

export class ProcessKeeper {
  readonly #options: ResolvedSandboxOptions;
  readonly #strikes: StrikeSync;
  #child: ChildHandle | undefined;
  #starting: Promise<ChildHandle> | undefined;
  /** set by close(): the sandbox takes no more calls */
  closing = false;
  /** set by beginShutdown() or close(): a process that dies is not restarted, counted or blamed */
  shuttingDown = false;
  #closed: Promise<void> | undefined;
  crashes = 0;
  started = 0;

  constructor(options: ResolvedSandboxOptions, strikes: StrikeSync) {
    this.#options = options;
    this.#strikes = strikes;
  }

  /** the current process (undefined once it has exited, until the next one is up) */
  get child(): ChildHandle | undefined {
    return this.#child;
  }

  /** The running process, or a new one (up to MAX_START_ATTEMPTS tries, with back-off). */
  ensure(): Promise<ChildHandle> {
    const child = this.#child;
    if (child && !child.exited) return Promise.resolve(child);
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #start(): Promise<ChildHandle> {
    let lastError: unknown;
    for (let attempt = 0; attempt < MAX_START_ATTEMPTS && !this.shuttingDown; attempt++) {
      if (attempt > 0) await sleep(Math.min(5_000, 100 * 2 ** attempt));
      try {
        this.#child = await this.#spawnOnce();
        return this.#child;
      } catch (e) {
        lastError = e;
        this.#options.logger.error(
          { attempt: attempt + 1, err: e instanceof Error ? e.message : String(e) },
          'sandbox process failed to start',
        );
      }
    }
    throw lastError instanceof Error
      ? lastError
      : fail('GW_ERR_SANDBOX_UNAVAILABLE', { message: 'the sandbox is shutting down' });
  }

  async #spawnOnce(): Promise<ChildHandle> {
    const options = this.#options;
    const handle = new ChildHandle(
      options,
      (dead, blamed, code, signal, certain) => this.#onExit(dead, blamed, code, signal, certain),
      () => !this.shuttingDown,
    );
    const timer = setTimeout(() => handle.kill(), START_TIMEOUT_MS);
    try {
      const pid = await handle.ready;
      this.started++;
      options.logger.info({ sandboxPid: pid, workers: options.workers }, 'sandbox process ready');
      return handle;
    } catch (e) {
      handle.kill();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  #onExit(
    dead: ChildHandle,
    blamed: PluginIdentity[],
    code: number | null,
    signal: string | null,
    certain: boolean,
  ): void {
    const logger = this.#options.logger;
    if (this.#child === dead) this.#child = undefined;
    if (this.closing) return;
    if (this.shuttingDown) {
      logger.warn(
        { sandboxPid: dead.pid, code, signal },
        'sandbox process exited during shutdown; its calls in flight failed, and it is not restarted',
      );
      return;
    }
    this.crashes++;
    const plugins = [...new Set(blamed.map(pluginLabel))];
    logger.error(
      { sandboxPid: dead.pid, code, signal, plugins },
      'sandbox process died; failing its calls in flight and restarting it',
    );
    // one strike per plugin per crash, however many of its calls were in flight: a busy bystander
    // must not collect strikes faster than the plugin that brought the process down
    // only a strike on a known culprit is shared with other replicas: one blamed on every plugin in
    // flight (a signal, the OOM killer, the watchdog) counts here alone, or a fleet's unexplained
    // crashes would quarantine its busiest plugin everywhere
    const struck = new Map(blamed.map((plugin) => [pluginKey(plugin), plugin]));
    for (const plugin of struck.values()) this.#strikes.strike(plugin, certain);
    void this.ensure().catch(() => undefined);
  }

  /**
   * Asks the process to finish its calls and exit (killed past the grace), then stops the strike
   * sync. `refuseWaiting` runs once the sandbox is closing, before anything is awaited.
   */
  close(refuseWaiting: () => void): Promise<void> {
    this.#closed ??= (async () => {
      this.closing = true;
      this.shuttingDown = true;
      refuseWaiting();
      const current = this.#child ?? (await this.#starting?.catch(() => undefined));
      if (!current || current.exited) return this.#strikes.stop();
      const exited = new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (current.exited) {
            clearInterval(check);
            resolve();
          }
        }, 20);
      });
      current.close(this.#options.closeGraceMs);
      const timer = setTimeout(() => current.kill(), this.#options.closeGraceMs + 2_000);
      await exited;
      clearTimeout(timer);
      // after the calls: a strike recorded as the last of them ended is still written
      await this.#strikes.stop();
    })();
    return this.#closed;
  }
}

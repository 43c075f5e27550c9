import { renameSync, rmSync } from 'node:fs';
import type { Logger } from '../shared/logger.ts';
import type { ScriptToRun } from './script.ts';
import { openUnixSockets, type ListeningSocket } from './listen-socket.ts';
import type { WorkerdProcess } from './workerd-process.ts';
import type { Clock } from '../shared/clock.ts';

/**
 * The workerd process that runs one deployed script (one isolate, so Cloudflare's limits per isolate and
 * per invocation are the process's limits, whatever else its account runs): it listens on a unix socket
 * that this object holds (a "slot" of the front processes, see FunctionsRuntime), and the front processes
 * forward the script's requests to it.
 *
 * When the process crashes, a successor starts at once on the same socket: connections queued there
 * meanwhile are served by it. When the watchdog kills it at a limit, the socket goes with it (`beforeKill`
 * lets go of this object's copy first): the requests it had accepted and those queued behind them fail, and
 * the front answers each with 1102; a request the front retries on a new connection (workerd does, for a
 * pooled connection that closed unanswered) finds no listener and gets 1102 too, instead of running the
 * runaway code again in the successor. Once the process is gone, a spare socket opened beforehand is renamed
 * to the path (atomic), so connections from then on wait for the successor there. Only a crash loop backs
 * off, up to 1 s, so it cannot spin a core.
 */
export class ScriptBackend {
  readonly accountId: string;
  readonly scriptName: string;
  /** Which version, secrets and settings it runs (see runtimeFingerprint): equal means nothing to reload. */
  readonly fingerprint: string;
  /** What it runs. */
  readonly deployed: ScriptToRun;
  /** The front's binding index of its socket. */
  readonly slot: number;
  readonly socketPath: string;
  #socket: ListeningSocket | undefined;
  /** Listens at `<socketPath>.spare` until a limit kill makes it the socket (see the class comment). */
  #spare: ListeningSocket | undefined;
  /** Writes the config, starts a process on the socket, waits until it is ready and watched. */
  readonly #launch: (socket: ListeningSocket, beforeKill: () => void) => Promise<WorkerdProcess>;
  readonly #logger: Logger;
  readonly #stopGraceMs: number | undefined;
  readonly #onRestart: ((reason: 'crash' | 'limit') => void) | undefined;
  #process: WorkerdProcess | undefined;
  #restarting: Promise<void> | undefined;
  #recentExits: number[] = [];
  #stopped = false;
  /** Its sockets went to a successor (handOver): stopping it leaves them alone. */
  #handedOver = false;

  readonly #clock: Clock;

  constructor(options: {
    accountId: string;
    scriptName: string;
    fingerprint: string;
    deployed: ScriptToRun;
    slot: number;
    socket: ListeningSocket;
    socketPath: string;
    /** A second listening socket at `<socketPath>.spare`. */
    spare: ListeningSocket;
    launch: (socket: ListeningSocket, beforeKill: () => void) => Promise<WorkerdProcess>;
    /**
     * At least this long from SIGTERM to SIGKILL, whoever stops it: a process that is an instance of a workerd
     * cluster hands its objects to the other nodes in that time.
     */
    stopGraceMs?: number | undefined;
    logger: Logger;
    /** The crash loop's back-off. */
    clock: Clock;
    /** Told of each restart after an unexpected exit or a limit kill (metrics). */
    onRestart?: (reason: 'crash' | 'limit') => void;
  }) {
    this.#clock = options.clock;
    this.#onRestart = options.onRestart;
    this.accountId = options.accountId;
    this.scriptName = options.scriptName;
    this.fingerprint = options.fingerprint;
    this.slot = options.slot;
    this.deployed = options.deployed;
    this.socketPath = options.socketPath;
    this.#socket = options.socket;
    this.#spare = options.spare;
    this.#launch = options.launch;
    this.#stopGraceMs = options.stopGraceMs;
    this.#logger = options.logger;
  }

  /** The running process's id (undefined between a death and its successor's start). */
  get pid(): number | undefined {
    return this.#process?.running ? this.#process.child.pid : undefined;
  }

  /** The running process (undefined between a death and its successor's start). */
  get process(): WorkerdProcess | undefined {
    return this.#process?.running ? this.#process : undefined;
  }

  /** Starts the first process; rejects with its load error. */
  async start(): Promise<void> {
    this.#adopt(await this.#launch(this.#socket!, () => this.#releaseSocket()));
  }

  /**
   * Stops the process and gives its slot and sockets to a successor, which starts on them: connections that
   * arrive meanwhile wait in the socket's backlog. For a script whose Durable Objects must never run in two
   * processes at once (each object has one live instance), a redeploy goes this way instead of overlapping.
   */
  async handOver(): Promise<{ slot: number; socketPath: string; socket: ListeningSocket; spare: ListeningSocket }> {
    this.#stopped = true;
    this.#handedOver = true;
    await this.#restarting;
    await this.#process?.stop(this.#stopGraceMs);
    // After a limit kill the socket went with the process: the spare (or a new socket) takes the path.
    if (!this.#socket && this.#spare) {
      renameSync(`${this.socketPath}.spare`, this.socketPath);
      this.#socket = this.#spare;
      this.#spare = undefined;
    }
    if (!this.#socket) {
      rmSync(this.socketPath, { force: true });
      [this.#socket] = await openUnixSockets([this.socketPath]);
    }
    if (!this.#spare) {
      rmSync(`${this.socketPath}.spare`, { force: true });
      [this.#spare] = await openUnixSockets([`${this.socketPath}.spare`]);
    }
    const taken = { slot: this.slot, socketPath: this.socketPath, socket: this.#socket!, spare: this.#spare! };
    this.#socket = undefined;
    this.#spare = undefined;
    return taken;
  }

  /** Stops the process (SIGTERM: it finishes what it serves; SIGKILL after `graceMs`) and closes the socket. */
  async stop(graceMs?: number): Promise<void> {
    this.#stopped = true;
    await this.#restarting;
    await this.#process?.stop(this.#stopGraceMs === undefined ? graceMs : Math.max(graceMs ?? 0, this.#stopGraceMs));
    if (this.#handedOver) return;
    this.#releaseSocket();
    this.#spare?.handle.close();
    this.#spare = undefined;
    rmSync(this.socketPath, { force: true });
    rmSync(`${this.socketPath}.spare`, { force: true });
  }

  /** Closes this object's copy of the listening socket: it closes for good once the process has it no more. */
  #releaseSocket(): void {
    this.#socket?.handle.close();
    this.#socket = undefined;
  }

  #adopt(process: WorkerdProcess): void {
    this.#process = process;
    void process.exited.then((code) => this.#onExit(process, code));
  }

  #onExit(process: WorkerdProcess, code: number | null): void {
    if (this.#stopped || process.stopping || this.#process !== process) return;
    const now = this.#clock.now();
    this.#recentExits = [...this.#recentExits.filter((t) => now - t < 10_000), now];
    const delay = Math.min(1_000, (this.#recentExits.length - 1) * 200);
    const fields = { account: this.accountId, script: this.scriptName, pid: process.child.pid, code, delay_ms: delay };
    this.#onRestart?.(process.limitExceeded ? 'limit' : 'crash');
    if (!this.#socket && this.#spare) {
      renameSync(`${this.socketPath}.spare`, this.socketPath);
      this.#socket = this.#spare;
      this.#spare = undefined;
    }
    if (process.limitExceeded) this.#logger.info('restarting a function process after a limit kill', fields);
    else this.#logger.error('a function process exited unexpectedly; restarting', fields);
    const restart = new Promise<void>((resolve) => setTimeout(resolve, delay).unref()).then(() => this.#relaunch());
    this.#restarting = restart;
    void restart.finally(() => {
      if (this.#restarting === restart) this.#restarting = undefined;
    });
  }

  async #relaunch(): Promise<void> {
    if (this.#stopped) return;
    let next: WorkerdProcess;
    try {
      if (!this.#socket) {
        rmSync(this.socketPath, { force: true });
        [this.#socket] = await openUnixSockets([this.socketPath]);
      }
      if (!this.#spare) {
        rmSync(`${this.socketPath}.spare`, { force: true });
        [this.#spare] = await openUnixSockets([`${this.socketPath}.spare`]);
      }
      next = await this.#launch(this.#socket!, () => this.#releaseSocket());
    } catch (error) {
      // Same code as the process that served: a start failure is transient (e.g. no memory); retry.
      this.#logger.error('function process restart failed; retrying', {
        account: this.accountId,
        script: this.scriptName,
        err: error,
      });
      const process = this.#process;
      if (process) this.#onExit(process, null);
      return;
    }
    if (this.#stopped) {
      await next.stop(1_000);
      return;
    }
    this.#adopt(next);
  }
}

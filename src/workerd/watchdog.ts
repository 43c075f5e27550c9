import { closeSync, openSync, readSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { Logger } from '../shared/logger.ts';
import type { ProcessLimits } from './limits.ts';
import type { LimitExceeded, WorkerdProcess } from './workerd-process.ts';

/**
 * How often each watched process's CPU time and resident size are read. A function allocating 1 MiB
 * buffers in a loop grows its process by ~100 MiB in 50 ms on this machine; at 50 ms ticks the memory kill
 * overshot the limit by more than a tick's allowance about one run in three (test/workers/isolation). One
 * /proc read per process per tick (both figures are in /proc/<pid>/stat) costs little.
 */
const TICK_MS = 20;
/**
 * The most often a process is pinged: a ping only has to prove that the JavaScript thread came free
 * once in a while, and each one costs an HTTP exchange in Node and a request through workerd's thread.
 * Pinging every tick cost Node more CPU than serving R2 reads under bench/functions' GET 1 MiB load
 * (22% of the server's busy samples were in the ping client; docs/benchmarks-history.md, 2026-11-23).
 * A ping is sent once the previous one was answered and this much time has passed since it was sent, or an
 * eighth of the CPU limit if that is shorter, so a spin that starts right after an answer runs at most
 * that much beyond its limit.
 */
const MAX_PING_INTERVAL_MS = 1_000;
/** Linux reports CPU time in clock ticks of 1/100 s (USER_HZ; Node cannot ask sysconf). */
const MS_PER_CLOCK_TICK = 10;
const PAGE_BYTES = 4096;

interface Watched {
  process: WorkerdProcess;
  pid: number;
  limits: ProcessLimits;
  label: Record<string, unknown>;
  agent: Agent;
  pingSocket: string;
  /** CPU time (ms) when the unanswered ping was sent; undefined while none is outstanding. */
  pingCpuMs: number | undefined;
  /** When (ms, monotonic) the last ping was sent. */
  pingSentAt: number;
  pingIntervalMs: number;
  /** /proc/<pid>/stat, opened once and re-read in place (no open and close per tick). */
  stat: ProcFile;
  baselineBytes: number;
  beforeKill: (() => void) | undefined;
}

/**
 * Enforces CPU and memory limits on workerd, which has none of its own (its config has no CPU or memory limit per
 * process or isolate). workerd runs all JavaScript of a process on one thread, so a script that spins blocks every
 * request of that process and also the tiny ping service each watched process has on its own unix socket. Every tick,
 * a process without an outstanding ping gets one; a process whose ping is still unanswered after it spent the
 * script's cpu_ms of CPU time since it was sent is spinning (time blocked on I/O or waiting for a core on a loaded
 * machine does not count) and is SIGKILLed. A process whose resident size grew past its memory limit above the size
 * it had once ready is killed too. The supervisor restarts killed processes.
 */
export class Watchdog {
  readonly #watched = new Set<Watched>();
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /**
   * Watches a ready process from now until it exits. `pingSocket` is the unix socket its "ping" socket
   * listens on. A process killed here has `limitExceeded` set before it exits.
   */
  watch(
    process: WorkerdProcess,
    options: {
      pingSocket: string;
      limits: ProcessLimits;
      label: Record<string, unknown>;
      /** Runs just before the kill (a script's backend lets go of its socket, see script-backend.ts). */
      beforeKill?: (() => void) | undefined;
    },
  ): void {
    const pid = process.child.pid;
    if (pid === undefined || !process.running) return;
    const stat = new ProcFile(`/proc/${pid}/stat`);
    const watched: Watched = {
      process,
      pid,
      limits: options.limits,
      label: options.label,
      agent: new Agent({ keepAlive: true, maxSockets: 1 }),
      pingSocket: options.pingSocket,
      pingCpuMs: undefined,
      pingSentAt: -Infinity,
      pingIntervalMs: Math.min(MAX_PING_INTERVAL_MS, Math.max(TICK_MS, options.limits.cpuMs / 8)),
      stat,
      baselineBytes: readStat(stat)?.residentBytes ?? 0,
      beforeKill: options.beforeKill,
    };
    this.#watched.add(watched);
    void process.exited.then(() => {
      this.#forget(watched);
      rmSync(watched.pingSocket, { force: true });
      if (this.#watched.size === 0) this.#stopTimer();
    });
    this.#timer ??= setInterval(() => this.#tick(), TICK_MS).unref();
  }

  stop(): void {
    this.#stopTimer();
    for (const watched of this.#watched) this.#forget(watched);
  }

  #forget(watched: Watched): void {
    this.#watched.delete(watched);
    watched.agent.destroy();
    watched.stat.close();
  }

  #stopTimer(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    for (const watched of this.#watched) {
      if (!watched.process.running) continue;
      const figures = readStat(watched.stat);
      if (figures === undefined) continue;
      const { cpuMs, residentBytes: resident } = figures;
      if (resident - watched.baselineBytes > watched.limits.memoryBytes) {
        this.#kill(watched, 'memory', { resident_mib: Math.round(resident / 2 ** 20) });
      } else if (watched.pingCpuMs === undefined) {
        // A retiring process (SIGTERMed) closes its sockets: no new ping, but one sent before still counts,
        // so a runaway does not outlive its limit by the stop's grace period.
        if (!watched.process.stopping && performance.now() - watched.pingSentAt >= watched.pingIntervalMs)
          this.#ping(watched, cpuMs);
      } else if (cpuMs - watched.pingCpuMs >= watched.limits.cpuMs) {
        this.#kill(watched, 'cpu', { cpu_ms: cpuMs - watched.pingCpuMs });
      }
    }
  }

  #ping(watched: Watched, cpuMs: number): void {
    watched.pingCpuMs = cpuMs;
    watched.pingSentAt = performance.now();
    const done = () => {
      watched.pingCpuMs = undefined;
    };
    const ping = request({ socketPath: watched.pingSocket, path: '/', agent: watched.agent }, (response) => {
      response.resume();
      response.once('end', done);
    });
    // A refused or reset ping (the process is starting or exiting) says nothing about spinning.
    ping.once('error', done);
    ping.end();
  }

  #kill(watched: Watched, reason: LimitExceeded, detail: Record<string, unknown>): void {
    this.#logger.warn(
      reason === 'cpu'
        ? 'a function exceeded its CPU time limit; its workerd process is killed and restarted'
        : 'a function exceeded its memory limit; its workerd process is killed and restarted',
      { ...watched.label, pid: watched.pid, limit_cpu_ms: watched.limits.cpuMs, ...detail },
    );
    watched.process.limitExceeded = reason;
    watched.beforeKill?.();
    watched.process.child.kill('SIGKILL');
    this.#forget(watched);
  }
}

/** A /proc file kept open and read again from its start on every call (procfs regenerates it per read). */
class ProcFile {
  readonly #buffer = Buffer.allocUnsafe(1024);
  #fd: number | undefined;

  constructor(path: string) {
    try {
      this.#fd = openSync(path, 'r');
    } catch {
      this.#fd = undefined;
    }
  }

  /** The file's text, or undefined once the process is gone. */
  read(): string | undefined {
    if (this.#fd === undefined) return undefined;
    try {
      return this.#buffer.toString('latin1', 0, readSync(this.#fd, this.#buffer, 0, this.#buffer.length, 0));
    } catch {
      return undefined;
    }
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/**
 * A process's CPU time (utime + stime, fields 14 and 15 of /proc/<pid>/stat) and resident size (rss, field 24,
 * in pages: the figure statm gives too). The name before them may hold spaces, so fields count from its `)`.
 */
function readStat(stat: ProcFile): { cpuMs: number; residentBytes: number } | undefined {
  const text = stat.read();
  if (!text) return undefined;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    cpuMs: (Number(fields[11]) + Number(fields[12])) * MS_PER_CLOCK_TICK,
    residentBytes: Number(fields[21]) * PAGE_BYTES,
  };
}

import { readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { Logger } from '../../shared/logger.ts';
import type { ProcessLimits } from './limits.ts';
import type { LimitExceeded, WorkerdProcess } from './workerd-process.ts';

/** How often each watched process is pinged and its CPU time and resident size read. */
const TICK_MS = 50;
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
  baselineBytes: number;
}

/**
 * Enforces CPU and memory limits on workerd, which has none of its own (workerd issue #49). workerd runs
 * all JavaScript of a process on one thread, so a script that spins blocks every request of that process
 * and also the tiny ping service each watched process has on its own unix socket. Every tick, a process
 * without an outstanding ping gets one; a process whose ping is still unanswered after it spent the
 * script's cpu_ms of CPU time since it was sent is spinning (time blocked on I/O or waiting for a core
 * on a loaded machine does not count) and is SIGKILLed. A process whose resident size grew past its
 * memory limit above the size it had once ready is killed too. The supervisor restarts killed processes.
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
    },
  ): void {
    const pid = process.child.pid;
    if (pid === undefined || !process.running) return;
    const watched: Watched = {
      process,
      pid,
      limits: options.limits,
      label: options.label,
      agent: new Agent({ keepAlive: true, maxSockets: 1 }),
      pingSocket: options.pingSocket,
      pingCpuMs: undefined,
      baselineBytes: residentBytes(pid) ?? 0,
    };
    this.#watched.add(watched);
    void process.exited.then(() => {
      this.#watched.delete(watched);
      watched.agent.destroy();
      rmSync(watched.pingSocket, { force: true });
      if (this.#watched.size === 0) this.#stopTimer();
    });
    this.#timer ??= setInterval(() => this.#tick(), TICK_MS).unref();
  }

  stop(): void {
    this.#stopTimer();
    for (const watched of this.#watched) watched.agent.destroy();
    this.#watched.clear();
  }

  #stopTimer(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    for (const watched of this.#watched) {
      if (!watched.process.running) continue;
      const cpuMs = cpuTimeMs(watched.pid);
      if (cpuMs === undefined) continue;
      const resident = residentBytes(watched.pid) ?? 0;
      if (resident - watched.baselineBytes > watched.limits.memoryBytes) {
        this.#kill(watched, 'memory', { resident_mib: Math.round(resident / 2 ** 20) });
      } else if (watched.pingCpuMs === undefined) {
        // A retiring process (SIGTERMed) closes its sockets: no new ping, but one sent before still counts,
        // so a runaway does not outlive its limit by the stop's grace period.
        if (!watched.process.stopping) this.#ping(watched, cpuMs);
      } else if (cpuMs - watched.pingCpuMs >= watched.limits.cpuMs) {
        this.#kill(watched, 'cpu', { cpu_ms: cpuMs - watched.pingCpuMs });
      }
    }
  }

  #ping(watched: Watched, cpuMs: number): void {
    watched.pingCpuMs = cpuMs;
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
    watched.process.child.kill('SIGKILL');
    this.#watched.delete(watched);
    watched.agent.destroy();
  }
}

/** utime + stime of a process, from /proc/<pid>/stat (fields 14 and 15; the name before may hold spaces). */
function cpuTimeMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_CLOCK_TICK;
  } catch {
    return undefined;
  }
}

function residentBytes(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE_BYTES;
  } catch {
    return undefined;
  }
}

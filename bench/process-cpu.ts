import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { treePids } from './functions/processes.ts';

/** Linux reports CPU time in clock ticks of 1/100 s (USER_HZ). */
const MS_PER_CLOCK_TICK = 10;

/** CPU time (user + system, ms) used so far by each live process of a tree, keyed by a label per process. */
export type CpuSnapshot = Map<number, { label: string; ms: number }>;

/**
 * What each process of a tree has spent so far. A Ledge workerd is labelled by its config's directory: `gen-N`
 * (the functions port's processes: the entry router of a front, or the script itself in the direct
 * generation) or `script-<uuid>` (a script's own process behind the front); other processes by their command.
 */
export function cpuSnapshot(rootPid: number): CpuSnapshot {
  const snapshot: CpuSnapshot = new Map();
  for (const pid of treePids(rootPid)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * MS_PER_CLOCK_TICK;
      snapshot.set(pid, { label: labelOf(pid), ms });
    } catch {
      // exited meanwhile
    }
  }
  return snapshot;
}

function labelOf(pid: number): string {
  const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  if (comm !== 'workerd') return comm;
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  if (argv.some((arg) => /\/gen-\d+\//.test(arg))) return 'workerd (functions port)';
  if (argv.some((arg) => /\/script-[0-9a-f-]+\//.test(arg))) return 'workerd (script process)';
  if (argv.some((arg) => arg.includes('/engines/'))) return 'workerd (engines)';
  return 'workerd';
}

/**
 * CPU per request (µs) by label between two snapshots of the same tree, leaving out wrk (the load, not the
 * server). Processes that started in between count from zero.
 */
export function cpuPerRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): Record<string, number> {
  const byLabel: Record<string, number> = {};
  for (const [pid, { label, ms }] of after) {
    if (label === 'wrk' || label === 'taskset') continue;
    const spent = ms - (before.get(pid)?.ms ?? 0);
    byLabel[label] = (byLabel[label] ?? 0) + spent;
  }
  const perRequest: Record<string, number> = {};
  let total = 0;
  for (const [label, ms] of Object.entries(byLabel)) {
    perRequest[label] = Math.round((ms * 1000) / requests);
    total += ms;
  }
  perRequest.total = Math.round((total * 1000) / requests);
  return perRequest;
}

/** The machine's load averages (1, 5, 15 min): the figures of a shared machine mean little without them. */
export function loadAverage(): string {
  return loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
}

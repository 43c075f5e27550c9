import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime/stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user and system, ms) used so far by a process and its descendants, from /proc: what a proxy
 * spends per request, so a proxy that is slower because it shares the cores can be told from one that
 * costs more per request. nginx's and workerd's work happens in child processes, hence the tree.
 */
export function processTreeCpuMs(root: number): { userMs: number; systemMs: number } {
  const parents = new Map<number, number>();
  const ticks = new Map<number, [number, number]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the command name (which may contain spaces) start at ") ": state, ppid, ... utime (14), stime (15).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    parents.set(pid, Number(fields[1]));
    ticks.set(pid, [Number(fields[11]), Number(fields[12])]);
  }
  let user = 0;
  let system = 0;
  for (const [pid, [userTicks, systemTicks]] of ticks) {
    for (let at: number | undefined = pid; at !== undefined && at > 1; at = parents.get(at)) {
      if (at === root) {
        user += userTicks;
        system += systemTicks;
        break;
      }
    }
  }
  return { userMs: (user * 1000) / TICKS_PER_SECOND, systemMs: (system * 1000) / TICKS_PER_SECOND };
}

import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** RSS (bytes) of a process and all its descendants, from /proc (Linux). */
export function treeRss(rootPid: number): number {
  return sumOverTree(rootPid, (pid) => {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? '0') * 1024;
  });
}

/** Linux reports CPU time in clock ticks of 1/100 s (USER_HZ). */
const MS_PER_CLOCK_TICK = 10;

/**
 * CPU time (user + system, ms) spent so far by a process and all its live descendants, from /proc. The
 * difference over a measured run is the CPU a platform spent on it: unlike req/s, it hardly changes when
 * other work on a shared machine takes cores away, so it compares builds measured minutes apart.
 */
export function treeCpuMs(rootPid: number): number {
  return sumOverTree(rootPid, (_pid, fields) => (Number(fields[11]) + Number(fields[12])) * MS_PER_CLOCK_TICK);
}

/** CPU time (ms) of the workerd processes under `rootPid` (the rest of treeCpuMs is Node's). */
export function workerdCpuMs(rootPid: number): number {
  return sumOverTree(rootPid, (pid, fields) => {
    let name: string;
    try {
      name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      return 0; // exited meanwhile
    }
    return name === 'workerd' ? (Number(fields[11]) + Number(fields[12])) * MS_PER_CLOCK_TICK : 0;
  });
}

/**
 * Time (ms) the threads of a process tree spent runnable but waiting for a core (/proc/<pid>/task/<tid>/schedstat,
 * second field): on a machine whose cores are all busy, where a request's latency goes besides its own CPU.
 */
export function treeRunQueueMs(rootPid: number): number {
  let total = 0;
  for (const pid of treePids(rootPid)) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`))
        total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** Every live pid of a process tree (to pin it to cores with taskset). */
export function treePids(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended while we looked
    }
  }
  const pids: number[] = [];
  const stack = [rootPid];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    pids.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return pids;
}

/**
 * Sums `valueOf` over a process and all its live descendants. `fields` are those of /proc/<pid>/stat after
 * the command name (fields[1] is the parent pid).
 */
function sumOverTree(rootPid: number, valueOf: (pid: number, fields: string[]) => number): number {
  const children = new Map<number, number[]>();
  const values = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      values.set(pid, valueOf(pid, fields));
      const ppid = Number(fields[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    } catch {
      // the process ended while we looked
    }
  }
  let total = 0;
  const stack = [rootPid];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    total += values.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** Sends SIGTERM to a child and resolves once it has exited. */
export function stop(child: ChildProcess): Promise<void> {
  return new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) return r();
    child.once('exit', () => r());
    child.kill('SIGTERM');
  });
}

export { freePort } from '../../test/helpers/free-port.ts';

/**
 * `ledge server` arguments for a benchmark server of the checkout at `root` on the given ports. The traffic
 * port is 0 (servers run side by side; the default is one fixed number), except for builds from before the
 * load balancer data plane, which have no such flag.
 */
export function benchServerArgs(root: string, dataDir: string, apiPort: number, fnPort: number): string[] {
  const traffic = [
    ...(existsSync(join(root, 'src/load-balancing/traffic')) ? ['--traffic-port', '0'] : []),
    ...(existsSync(join(root, 'src/tls')) ? ['--traffic-tls-port', '0'] : []),
    ...(existsSync(join(root, 'src/s3')) ? ['--s3-api-port', '0'] : []),
  ];
  return [
    'server',
    '--json',
    '--data-dir',
    dataDir,
    '--port',
    String(apiPort),
    '--functions-port',
    String(fnPort),
    ...traffic,
  ];
}

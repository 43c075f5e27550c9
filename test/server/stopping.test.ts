import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, serverFlags, tempDir } from '../helpers/ledge.ts';
import {
  alive,
  descendants,
  portFree,
  scratchHome,
  startAs,
  SYSTEM_NODE_DIR,
  userEnv,
  within,
  type Running,
} from '../helpers/user-shell.ts';

/** What the spec allows a stop to take: the server and every workerd gone, no port held. */
const STOP_LIMIT_MS = 5_000;

/**
 * "The first hour", stopping: `npm start` (npm, its script, the server, the workerd processes) stopped
 * the ways a user stops it. The signal goes to npm's PID only, as `kill <pid>` or a closing terminal
 * (SIGHUP to the foreground job's leader) would send it; npm runs in its own process group so that
 * nothing else in this test run gets the signal.
 */
describe('stopping npm start', () => {
  const running: Running[] = [];
  afterEach(async () => {
    for (const run of running.splice(0)) {
      for (const { pid } of descendants(run.child.pid!)) process.kill(pid, 'SIGKILL');
      await run.stop('SIGKILL');
    }
  });

  /** `npm start` with the machine's npm, in a scratch HOME and working directory, on free ports. */
  const npmStart = async () => {
    const dataDir = tempDir('ledge-npm-start-');
    const npm = startAs('npm', ['start', '--prefix', REPO_ROOT, '--silent', '--', ...serverFlags(dataDir)], {
      cwd: tempDir('ledge-user-'),
      env: userEnv(scratchHome(), { PATH: `${SYSTEM_NODE_DIR ?? '/usr/bin'}:/bin` }),
      detached: true,
    });
    running.push(npm);
    const [line] = (await npm.waitFor(/^\{.*\}$/m, 60_000))!;
    const ready = JSON.parse(line) as { api_url: string; functions_port: number };
    const tree = descendants(npm.child.pid!);
    const server = tree.find((p) => p.command === 'node' || p.command.startsWith('MainThread'));
    const workerd = tree.filter((p) => p.command === 'workerd');
    expect(server, JSON.stringify(tree)).toBeDefined();
    expect(workerd.length).toBeGreaterThan(0);
    return {
      npm,
      pids: tree.map((p) => p.pid),
      serverPid: server!.pid,
      ports: [Number(new URL(ready.api_url).port), ready.functions_port],
    };
  };

  /** Time until npm, the server and every workerd are gone and both ports are free; undefined past the limit. */
  const timeToStop = (started: { npm: Running; pids: number[]; ports: number[] }) =>
    within(STOP_LIMIT_MS, async () => {
      if ([started.npm.child.pid!, ...started.pids].some(alive)) return false;
      return (await Promise.all(started.ports.map((port) => portFree(port)))).every(Boolean);
    });

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${signal} to npm's PID stops the server and every workerd within 5 s, freeing both ports`, async () => {
      const started = await npmStart();
      process.kill(started.npm.child.pid!, signal);
      const ms = await timeToStop(started);
      const left = descendants(1).filter((p) => started.pids.includes(p.pid));
      expect(ms, `still running after ${STOP_LIMIT_MS} ms: ${JSON.stringify(left)}`).toBeDefined();
    });
  }

  // What a terminal does: Ctrl+C sends SIGINT, and closing it SIGHUP, to the whole foreground process group
  // (npm and the server; npm forwards its SIGINT once more). workerd runs in a group of its own, so it is
  // stopped by the server (finishing its requests), never by the terminal's signal in a race with it.
  for (const signal of ['SIGINT', 'SIGHUP'] as const) {
    it(`${signal} to the whole job (Ctrl+C, a closing terminal) is one clean stop within 5 s`, async () => {
      const started = await npmStart();
      process.kill(-started.npm.child.pid!, signal);
      expect(await timeToStop(started), 'still running').toBeDefined();
      expect(started.npm.stderr()).toContain(`shutting down reason=${signal}`);
      expect(started.npm.stderr()).not.toContain('restarting');
      expect(started.npm.stderr()).not.toContain('stopping now');
    });
  }

  it('a server killed hard (SIGKILL) takes its workerd processes with it within 5 s', async () => {
    const started = await npmStart();
    process.kill(started.serverPid, 'SIGKILL');
    // npm exits once its script has died; workerd must not outlive the server.
    expect(await timeToStop(started), 'workerd outlived its server').toBeDefined();
  });
});

import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spawnLedge, tempDir } from '../helpers/ledge.ts';
import { poll } from '../helpers/wait.ts';

/** Pids of the workerd processes serving a data dir (read from /proc, whoever their parent is). */
function workerdPidsFor(dataDir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return args.some((arg) => arg.endsWith('workerd')) && args.some((arg) => arg.startsWith(dataDir));
      } catch {
        return false; // the process exited while we looked
      }
    })
    .map(Number);
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  return (await poll(check, { timeoutMs })) ?? check();
}

describe('workerd lifetime', () => {
  it('does not outlive a ledge server killed with SIGKILL (it would keep the functions port and old code)', async () => {
    const dataDir = tempDir('ledge-orphan-');
    try {
      const server = await spawnLedge(dataDir);
      expect(await waitFor(() => workerdPidsFor(dataDir).length > 0, 10_000)).toBe(true);
      await server.stop('SIGKILL');
      expect(await waitFor(() => workerdPidsFor(dataDir).length === 0, 3_000)).toBe(true);
    } finally {
      for (const pid of workerdPidsFor(dataDir)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('is stopped with a clean SIGTERM shutdown too', async () => {
    const dataDir = tempDir('ledge-orphan-');
    try {
      const server = await spawnLedge(dataDir);
      expect(await waitFor(() => workerdPidsFor(dataDir).length > 0, 10_000)).toBe(true);
      const exit = new Promise<[number | null, string | null]>((r) => server.child.once('exit', (c, s) => r([c, s])));
      server.child.kill('SIGTERM');
      expect(await exit).toEqual([0, null]);
      expect(await waitFor(() => workerdPidsFor(dataDir).length === 0, 3_000)).toBe(true);
    } finally {
      for (const pid of workerdPidsFor(dataDir)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS } from '../../eslint/layers.js';
import { REPO_ROOT } from '../helpers/ledge.ts';

/**
 * The layer rule (eslint/layers.js) on files placed in src/ of the repo, as `npm run lint` sees them;
 * lintText with a path under src/ needs no file on disk.
 */
async function lintAs(path: string, source: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: REPO_ROOT });
  const [result] = await eslint.lintText(source, { filePath: join(REPO_ROOT, path) });
  return result!.messages.filter((m) => m.ruleId === 'ledge/layers').map((m) => m.message);
}

describe('the layer lint rule', () => {
  it('refuses a subsystem importing the composition root', async () => {
    const messages = await lintAs(
      'src/workers/example.ts',
      "import type { Platform } from '../server/platform.ts';\nexport type X = Platform;\n",
    );
    expect(messages).toEqual(['src/workers/ may not import src/server/platform.ts (layers: eslint/layers.js)']);
  });

  it('refuses load balancing importing notifications, and shared importing anything above it', async () => {
    expect(
      await lintAs('src/load-balancing/example.ts', "export { x } from '../notifications/index.ts';\n"),
    ).toHaveLength(1);
    expect(await lintAs('src/shared/example.ts', "export { x } from '../db/index.ts';\n")).toHaveLength(1);
  });

  it('refuses the CLI importing a subsystem instead of going through the client', async () => {
    expect(await lintAs('src/cli/example.ts', "export { x } from '../workers/index.ts';\n")).toHaveLength(1);
    expect(await lintAs('src/cli/example.ts', "export { x } from '../client/index.ts';\n")).toEqual([]);
  });

  it("keeps the dashboard's browser code on the client: no subsystem, nothing of the dashboard's server side", async () => {
    expect(
      await lintAs('src/dashboard/ui/views/example.ts', "export { x } from '../../../client/index.ts';\n"),
    ).toEqual([]);
    expect(
      await lintAs('src/dashboard/ui/views/example.ts', "export { x } from '../../../load-balancing/index.ts';\n"),
    ).toHaveLength(1);
    expect(await lintAs('src/dashboard/ui/example.ts', "export { x } from '../sessions.ts';\n")).toHaveLength(1);
    expect(await lintAs('src/dashboard/ui/example.ts', "export { x } from '../../client/wire.ts';\n")).toEqual([
      'import src/client/ through its index.ts, not src/client/wire.ts',
    ]);
  });

  it('sends one subsystem to another through its index.ts', async () => {
    expect(
      await lintAs(
        'src/notifications/example.ts',
        "export type { HealthEvent } from '../load-balancing/health/events.ts';\n",
      ),
    ).toEqual(['import src/load-balancing/ through its index.ts, not src/load-balancing/health/events.ts']);
    expect(
      await lintAs('src/notifications/example.ts', "export type { HealthEvent } from '../load-balancing/index.ts';\n"),
    ).toEqual([]);
  });

  it('asks for an entry when a new folder appears in src/', async () => {
    expect(await lintAs('src/brand-new/example.ts', "export { x } from '../shared/ids.ts';\n")).toEqual([
      'src/brand-new/ has no entry in eslint/layers.js: add its allowed imports',
    ]);
  });

  it('has no cycle between layers: no layer reaches itself through the ones it may import', () => {
    const graph = LAYERS as Record<string, string[]>;
    const reaches = (from: string, seen = new Set<string>()): Set<string> => {
      for (const to of graph[from] ?? []) {
        if (!seen.has(to)) {
          seen.add(to);
          reaches(to, seen);
        }
      }
      return seen;
    };
    const cycles = Object.keys(graph).filter((layer) => reaches(layer).has(layer));
    expect(cycles).toEqual([]);
  });

  it('names only folders that exist in src/ (and the api kit, server entry and dashboard UI it carves out)', () => {
    const folders = new Set(
      readdirSync(join(REPO_ROOT, 'src'), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name),
    );
    const named = new Set([...Object.keys(LAYERS), ...Object.values(LAYERS as Record<string, string[]>).flat()]);
    const virtual = new Set(['api-kit', 'server-entry', 'dashboard-ui']);
    expect([...named].filter((name) => !folders.has(name) && !virtual.has(name))).toEqual([]);
  });
});

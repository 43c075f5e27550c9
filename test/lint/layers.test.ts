import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ESLint, Linter } from 'eslint';
import { describe, expect, it } from 'vitest';
import { createLayersPlugin, LAYERS, layerCycle } from '../../eslint/layers.js';
import { REPO_ROOT } from '../helpers/ledge.ts';
import { folderCycle } from './folder-imports.ts';

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
    expect(layerCycle(LAYERS)).toBeNull();
    expect(layerCycle({ a: ['b'], b: ['c'], c: ['a'], d: [] })).toEqual(['a', 'b', 'c', 'a']);
  });

  it('fails every file of src/ when its table has a cycle, and refuses the import back up an acyclic one', () => {
    const lint = (layers: Record<string, string[]>, path: string, source: string): string[] => {
      const config = {
        files: ['**/*.ts'],
        plugins: { ledge: createLayersPlugin(layers) },
        rules: { 'ledge/layers': 'error' as const },
      };
      const messages = new Linter({ cwd: '/repo' }).verify(source, [config], { filename: `/repo/${path}` });
      return messages.map((m) => m.message);
    };
    const cyclic = { low: ['high'], high: ['low'] };
    expect(lint(cyclic, 'src/low/a.ts', 'export const a = 1;\n')).toEqual([
      'eslint/layers.js has a cycle: low -> high -> low',
    ]);
    const oneWay = { low: [], high: ['low'] };
    expect(lint(oneWay, 'src/high/a.ts', "export { b } from '../low/index.ts';\n")).toEqual([]);
    expect(lint(oneWay, 'src/low/b.ts', "export { a } from '../high/a.ts';\n")).toEqual([
      'src/low/ may not import src/high/a.ts (layers: eslint/layers.js)',
    ]);
  });

  it('finds no two folders of src/ importing each other, directly or round about', () => {
    expect(folderCycle(join(REPO_ROOT, 'src'))).toBeNull();
  });

  it('finds a folder cycle planted in a synthetic src/ (the check can fail)', () => {
    const src = mkdtempSync(join(tmpdir(), 'ledge-folder-cycle-'));
    try {
      const put = (path: string, text: string) => {
        mkdirSync(dirname(join(src, path)), { recursive: true });
        writeFileSync(join(src, path), text);
      };
      put('kit/context.ts', "import type { Principal } from '../accounts/index.ts';\nexport type C = Principal;\n");
      put('accounts/index.ts', "export type Principal = { id: string };\nexport * from './routes.ts';\n");
      put('accounts/routes.ts', "import type { C } from '../api/context.ts';\nexport type R = C;\n");
      put('api/context.ts', "export type { C } from '../kit/context.ts';\n");
      expect(folderCycle(src)).toEqual(['accounts', 'api', 'kit', 'accounts']);
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  });

  it('names only folders that exist in src/ (and the server entry it carves out)', () => {
    const folders = new Set(
      readdirSync(join(REPO_ROOT, 'src'), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name),
    );
    const named = new Set([...Object.keys(LAYERS), ...Object.values(LAYERS as Record<string, string[]>).flat()]);
    const virtual = new Set(['server-entry']);
    expect([...named].filter((name) => !folders.has(name) && !virtual.has(name))).toEqual([]);
  });
});

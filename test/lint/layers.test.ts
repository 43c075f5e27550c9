import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
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
});

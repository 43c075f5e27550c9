import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/ledge.ts';

/** The clock rule (eslint.config.js) on files placed in src/, as `npm run lint` sees them. */
async function lintAs(path: string, source: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: REPO_ROOT });
  const [result] = await eslint.lintText(source, { filePath: join(REPO_ROOT, path) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

describe('the clock lint rule', () => {
  it('refuses Date.now() and an argument-less new Date() in src, naming the Clock', async () => {
    const messages = await lintAs(
      'src/storage/example.ts',
      'export const a = Date.now();\nexport const b = new Date().toISOString();\n',
    );
    expect(messages).toHaveLength(2);
    for (const message of messages) expect(message).toContain('injected Clock (src/shared/clock.ts)');
  });

  it('allows a date made from a time, the clock module itself, the browser UI and the isolate modules', async () => {
    expect(await lintAs('src/storage/example.ts', 'export const a = new Date(0).toISOString();\n')).toEqual([]);
    expect(await lintAs('src/shared/clock.ts', 'export const a = Date.now();\n')).toEqual([]);
    expect(await lintAs('src/dashboard/ui/example.ts', 'export const a = Date.now();\n')).toEqual([]);
    expect(await lintAs('src/workerd/isolate/example.ts', 'export const a = new Date();\n')).toEqual([]);
  });
});

describe('the system clock', () => {
  it('is named in src only where the process starts: a part handed no clock is a type error, not the real time', () => {
    const src = join(REPO_ROOT, 'src');
    const naming = readdirSync(src, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
      .filter((file) => /\bsystemClock\b/.test(readFileSync(join(src, file), 'utf8')))
      .sort();
    // The CLI's context makes it (every command, `ledge server` included, runs on it); the clock module defines
    // it; the time stamp and logger helpers default to it for the code that runs before a platform exists.
    expect(naming).toEqual(['cli/context.ts', 'shared/clock.ts', 'shared/logger.ts', 'shared/time.ts']);
  });
});

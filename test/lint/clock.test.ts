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
  const src = join(REPO_ROOT, 'src');
  const sources = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .sort()
    .map((file) => ({ file, text: readFileSync(join(src, file), 'utf8') }));

  it('is named in src only where the process starts: a part handed no clock is a type error, not the real time', () => {
    // The CLI's context makes it (every command, `ledge server` included, runs on it); the clock module defines
    // it. Nothing else may fall back on it: the time stamp and logger helpers take the caller's clock.
    const naming = sources.filter(({ text }) => /\bsystemClock\b/.test(text)).map(({ file }) => file);
    expect(naming).toEqual(['cli/context.ts', 'shared/clock.ts']);
  });

  it('is never a default: no parameter or field of type Clock is optional or has a default value', () => {
    const defaults = sources.flatMap(({ file, text }) =>
      [
        ...text.matchAll(
          /(?<!\b(?:const|let|var)\s+)\b\w+\??\s*:\s*Clock\s*=|\bclock\s*\?\s*:|:\s*Clock\s*\|\s*undefined/g,
        ),
      ].map((match) => `${file}: ${match[0]}`),
    );
    expect(defaults).toEqual([]);
  });
});

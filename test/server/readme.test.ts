import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.ts';
import { REPO_ROOT } from '../helpers/ledge.ts';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const APP_README = readFileSync(join(REPO_ROOT, 'templates/app/README.md'), 'utf8');

/** The lines of the ```sh blocks, comments dropped. */
function shellLines(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((block) => block.split('\n'))
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter(Boolean);
}

/** Words as a shell splits them (quotes kept together, no expansion). */
function words(line: string): string[] {
  return [...line.matchAll(/'[^']*'|"[^"]*"|\S+/g)].map((m) => m[0]);
}

/** Walks `ledge <words>` down the command tree; returns the command reached and the options it knows. */
function resolve(program: Command, args: string[]): { path: string[]; options: Set<string> } {
  let command = program;
  const path: string[] = [];
  const options = new Set(program.options.flatMap((o) => [o.long, o.short].filter((f): f is string => !!f)));
  for (const arg of args) {
    if (arg.startsWith('-')) break;
    const sub = command.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!sub) break;
    command = sub;
    path.push(arg);
    for (const o of sub.options) for (const f of [o.long, o.short]) if (f) options.add(f);
  }
  if (command.commands.length > 0 && !(command as unknown as { _actionHandler?: unknown })._actionHandler) {
    throw new Error(`\`ledge ${args.join(' ')}\` stops at \`${path.join(' ')}\`, which needs a subcommand`);
  }
  return { path, options };
}

const program = await buildProgram();

/** "The first hour", a quiet, true README: every command of its tour exists as written. */
describe('the README tour', () => {
  const ledgeLines = [...shellLines(README), ...shellLines(APP_README)]
    .flatMap((line) => line.split(/&&|\|/).map((part) => part.trim()))
    .filter((part) => part.startsWith('ledge '));

  it('has ledge commands to check', () => {
    expect(ledgeLines.length).toBeGreaterThan(15);
  });

  it('uses only commands and options the CLI has', () => {
    const wrong: string[] = [];
    for (const line of ledgeLines) {
      const args = words(line).slice(1);
      try {
        const { path, options } = resolve(program, args);
        if (path.length === 0) wrong.push(`${line}: no such command`);
        for (const arg of args) {
          const flag = arg.split('=')[0]!;
          if (flag.startsWith('-') && !options.has(flag)) wrong.push(`${line}: unknown option ${flag}`);
        }
      } catch (error) {
        wrong.push((error as Error).message);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('runs npm scripts that exist', () => {
    const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: object }).scripts;
    for (const [, name] of README.matchAll(/npm run ([\w:-]+)/g)) expect(Object.keys(scripts)).toContain(name);
  });

  it('sends only files that exist or that an earlier step makes', () => {
    const lines = shellLines(README);
    for (const [index, line] of lines.entries()) {
      for (const [, file] of line.matchAll(/(?:--data-binary|--data|-d|-T) @?([\w./-]+)/g)) {
        const madeBefore = lines.slice(0, index).some((earlier) => new RegExp(`>\\s*${file}\\b`).test(earlier));
        expect(madeBefore, `${file} in: ${line}`).toBe(true);
      }
    }
  });

  it('says where <subdomain> comes from, how to stop wrangler telemetry, and serves no credentials', () => {
    expect(README).toMatch(/`<subdomain>` is your account's workers subdomain[\s\S]{0,100}`ledge deploy`/);
    expect(README).toContain('WRANGLER_SEND_METRICS=false');
    expect(APP_README).toContain('WRANGLER_SEND_METRICS=false');
    const origins = shellLines(README).filter((line) => line.includes('http.server'));
    expect(origins.length).toBeGreaterThan(0);
    // An origin serving the working directory would publish the checkout, .ledge/credentials.json included.
    for (const origin of origins) expect(origin).toMatch(/--directory "\$\(mktemp -d\)"/);
  });

  it('keeps the first two commands the standard asks for', () => {
    const [first, second] = shellLines(README);
    expect(first).toBe('npm install && npm start');
    expect(second).toBe('npm install && npm test');
  });
});

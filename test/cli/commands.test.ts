import { spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../../src/cli/commands.ts';
import { buildProgram, commandOf } from '../../src/cli/program.ts';
import { CLI_ENTRY } from '../helpers/ledge.ts';

/** A command's whole tree as text: names, arguments, options and descriptions of it and every subcommand. */
function shape(command: Command): string {
  const own = [
    command.name(),
    command.description(),
    command.registeredArguments.map((a) => a.name()).join(' '),
    command.options.map((o) => `${o.flags} ${o.description}`).join('; '),
  ].join(' | ');
  return [own, ...command.commands.map((sub) => shape(sub).replace(/^/gm, '  '))].join('\n');
}

/**
 * `ledge` loads only the module of the command it runs (src/cli/commands.ts): the table must name every
 * command, and a command loaded alone must be the command the whole program has.
 */
describe('the command table', () => {
  it('lists every top-level command, and each loaded alone is the same command as in the whole program', async () => {
    const whole = await buildProgram();
    const names = whole.commands.map((c) => c.name()).filter((name) => name !== 'help');
    expect([...COMMAND_NAMES].sort()).toEqual([...names].sort());
    for (const name of names) {
      const alone = await buildProgram({ command: name });
      // Nothing else registered (a module that registers two commands brings both: login/logout).
      expect(alone.commands.length, name).toBeLessThanOrEqual(2);
      const full = whole.commands.find((c) => c.name() === name)!;
      const loaded = alone.commands.find((c) => c.name() === name);
      expect(loaded && shape(loaded), name).toBe(shape(full));
    }
  });

  it('finds the command after the global options, as commander reads them', async () => {
    const root = await buildProgram({ command: 'whoami' });
    expect(commandOf(['object', 'put', 'b/k'], root)).toBe('object');
    expect(commandOf(['--api-url', 'http://x/client/v4', '--account-id', 'a', 'object', 'get'], root)).toBe('object');
    expect(commandOf(['--api-token=t', 'tail', 'name'], root)).toBe('tail');
    // Anything else first: the whole program is loaded, so help and errors read as before.
    expect(commandOf([], root)).toBeUndefined();
    expect(commandOf(['--help'], root)).toBeUndefined();
    expect(commandOf(['-h', 'object'], root)).toBeUndefined();
    expect(commandOf(['--version'], root)).toBeUndefined();
    expect(commandOf(['--json', 'object'], root)).toBeUndefined();
    // An unknown command is a name too: registerCommands loads everything for it.
    expect(commandOf(['objects', 'list'], root)).toBe('objects');
  });

  it('`ledge --help` lists every command; an unknown one is refused with a suggestion (exit 2)', () => {
    const help = spawnSync(process.execPath, [CLI_ENTRY, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    for (const name of COMMAND_NAMES) expect(help.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    const wrong = spawnSync(process.execPath, [CLI_ENTRY, '--api-url', 'http://127.0.0.1:9', 'objects'], {
      encoding: 'utf8',
    });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain("error: unknown command 'objects'");
    expect(wrong.stderr).toContain('(Did you mean object?)');
  });
});

// Compares a benchmark between two commits on this machine, in one run: the command runs alternately in
// a checkout of --base and in this working tree, --runs times each, so a drift in the machine's speed hits
// both alike. Logs go to a temp dir; the last lines of each run are printed side by side.
//
//   node bench/ab.ts --base 170f71e --runs 3 -- npm run bench:functions -- --rounds 1 --only get_1m
import { spawnSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const separator = process.argv.indexOf('--');
const options = process.argv.slice(2, separator < 0 ? undefined : separator);
const command = separator < 0 ? [] : process.argv.slice(separator + 1);
const option = (name: string) => {
  const at = options.indexOf(name);
  return at >= 0 ? options[at + 1] : undefined;
};
const base = option('--base');
const runs = Number(option('--runs') ?? 3);
const tail = Number(option('--tail') ?? 25);
if (!base || command.length === 0 || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: node bench/ab.ts --base <commit> [--runs 3] [--tail 25] -- <command ...>');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'ledge-ab-'));
const baseDir = join(work, 'base');
const git = (...args: string[]) => {
  const result = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
};
git('worktree', 'add', '--detach', baseDir, base);
// The same installed packages for both sides (a dependency change between them needs its own install).
symlinkSync(join(ROOT, 'node_modules'), join(baseDir, 'node_modules'));
const head = git('rev-parse', '--short', 'HEAD');
const dirty = git('status', '--porcelain') === '' ? '' : ' (with uncommitted changes)';
console.log(`A/B: base ${base} vs HEAD ${head}${dirty}, ${runs} runs each, alternating; logs in ${work}`);
try {
  for (let run = 1; run <= runs; run++) {
    // Alternate which side goes first, so neither always runs on a warmer or cooler machine.
    const order = run % 2 === 1 ? (['base', 'head'] as const) : (['head', 'base'] as const);
    for (const side of order) {
      const cwd = side === 'base' ? baseDir : ROOT;
      const result = spawnSync(command[0]!, command.slice(1), { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      const output = `${result.stdout}${result.stderr}`;
      const log = join(work, `${side}-${run}.log`);
      writeFileSync(log, output);
      const load = spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.trim();
      console.log(`\n=== ${side} (${side === 'base' ? base : head}) run ${run}, exit ${result.status}, load ${load}`);
      console.log(output.trimEnd().split('\n').slice(-tail).join('\n'));
    }
  }
} finally {
  git('worktree', 'remove', '--force', baseDir);
}

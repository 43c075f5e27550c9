import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/ledge.ts';

/**
 * Comments and docs cite files by path (`src/workerd/config.ts`) or by name (`see tail-flags.ts`);
 * a file that was renamed or removed leaves them pointing nowhere. Every path cited in a comment of the code
 * or in the docs must exist, and every file name cited in a comment must be the name of some file of the
 * repo. (String literals are left alone: tests name files of the projects they make. Docs that speak of a
 * user's project, `src/index.ts` of the app, are told apart by its folder, which Ledge's src/ does not have.
 * The benchmark history is a diary of what was, and the templates are the app's own files.)
 */
const ROOTS = ['src', 'test', 'bench', 'scripts', 'eslint', 'docs', 'README.md'];
const NOT_OF_THE_PRESENT = new Set(['docs/benchmarks-history.md']);
const SKIP = new Set(['node_modules', '.git', 'images']);
const SOURCE = /\.(ts|js|mjs|md|sh)$/;
const CITED_PATH =
  /(?<![\w./-])((?:src|test|bench|docs|scripts|eslint|templates)\/[\w./-]*[\w-]\.(?:ts|js|mjs|md|json|sh))\b/g;
const CITED_NAME = /(?<![\w./-])([a-z][\w-]*\.(?:ts|mjs))\b/g;

/** The comments of a source file (line and block comments, roughly: enough to find the files they cite). */
function commentsOf(text: string): string {
  return [...text.matchAll(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g)].map((m) => m[0]).join('\n');
}

/** A path of Ledge's own: its first folder below the top one exists (src/workers/..., not an app's src/index.ts). */
function isLedgePath(path: string): boolean {
  const [top, second] = path.split('/');
  return second !== undefined && existsSync(join(REPO_ROOT, top!, second));
}

function files(path: string): string[] {
  const full = join(REPO_ROOT, path);
  if (!existsSync(full)) return [];
  if (statSync(full).isFile()) return SOURCE.test(path) ? [path] : [];
  return readdirSync(full).flatMap((name) => (SKIP.has(name) ? [] : files(join(path, name))));
}

describe('cited paths', () => {
  const all = ROOTS.flatMap(files);
  const names = new Set(all.map((path) => basename(path)));

  it('every path and file name a comment or doc cites exists', () => {
    const missing: string[] = [];
    for (const file of all) {
      if (file === relative(REPO_ROOT, import.meta.filename) || NOT_OF_THE_PRESENT.has(file)) continue;
      const text = readFileSync(join(REPO_ROOT, file), 'utf8');
      const prose = file.endsWith('.md');
      const cited = prose ? text : commentsOf(text);
      for (const [, path] of cited.matchAll(CITED_PATH)) {
        if ((prose || !file.startsWith('src/')) && !isLedgePath(path!)) continue;
        if (!existsSync(join(REPO_ROOT, path!))) missing.push(`${file}: ${path}`);
      }
      if (prose) continue;
      for (const [, name] of cited.matchAll(CITED_NAME)) {
        if (!names.has(name!)) missing.push(`${file}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

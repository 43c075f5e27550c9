import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/ledge.ts';

/**
 * Comments in src/ say why the code is as it is, in words that stay true: a reference to the tracker or to a
 * work session ("issue 31", "session 10", "#26") means nothing to a reader without the project's history, and
 * the reason it stands for is left unsaid.
 */
const REFERENCE = /\b(?:issues?|sessions?)\s*#?\d+\b|(?<![&\w])#\d+\b/gi;

/** The comments of a source file, line and block (roughly: string literals that hold `//` count too). */
function commentsOf(text: string): string[] {
  return [...text.matchAll(/(?<!:)\/\/[^\n]*|\/\*[\s\S]*?\*\//g)].map((m) => m[0]);
}

/** Each tracker or session reference in the comments of `text`. */
export function trackerReferences(text: string): string[] {
  return commentsOf(text).flatMap((comment) => [...comment.matchAll(REFERENCE)].map((m) => m[0]));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

describe('comments in src/', () => {
  it('cite no issue, session or #number', () => {
    const found = sourceFiles(join(REPO_ROOT, 'src')).flatMap((file) =>
      trackerReferences(readFileSync(file, 'utf8')).map((ref) => `${relative(REPO_ROOT, file)}: ${ref}`),
    );
    expect(found).toEqual([]);
  });

  it('finds the references it is meant to (the check can fail)', () => {
    const source = [
      '// Cached per isolate (issue 31).',
      '/**',
      ' * Measured in session 10; see also #26 and Issue #7.',
      ' */',
      "const entity = '&#13;'; // a character reference, not a tracker one",
      "const url = 'http://example.com/#12';",
    ].join('\n');
    expect(trackerReferences(source)).toEqual(['issue 31', 'session 10', '#26', 'Issue #7']);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { layerCycle } from '../../eslint/layers.js';

/** Relative module specifiers of a file: static imports and re-exports, `import type`, and `import('...')`. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/**
 * Which folder of `srcDir` imports which, read from the files themselves (not from the layer table): the
 * check that the table and the rule together keep folders from importing each other.
 */
export function folderImports(srcDir: string): Record<string, string[]> {
  const graph: Record<string, Set<string>> = {};
  for (const file of sourceFiles(srcDir)) {
    const from = relative(srcDir, file).split('/')[0]!;
    graph[from] ??= new Set();
    for (const [, , specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const target = relative(srcDir, resolve(dirname(file), specifier!));
      if (target.startsWith('..')) continue;
      const to = target.split('/')[0]!;
      if (to !== from) graph[from].add(to);
    }
  }
  return Object.fromEntries(Object.entries(graph).map(([folder, targets]) => [folder, [...targets].sort()]));
}

/** The first folder cycle among the imports of `srcDir`, or null. */
export function folderCycle(srcDir: string): string[] | null {
  const graph = folderImports(srcDir);
  const sorted = Object.fromEntries(
    Object.keys(graph)
      .sort()
      .map((folder) => [folder, graph[folder]!]),
  );
  return layerCycle(sorted);
}

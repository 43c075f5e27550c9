import { SourceMap } from 'node:module';

/** workerd's own diagnostics, never the user's: its internal warnings and its C++ source locations. */
const RUNTIME_INTERNAL = /NOSENTRY|^\s*(?:workerd|kj|capnp)\/\S+\.c\+\+:\d+/;
/** A stack location in a module of the bundle: `index.js:3:9`, or `file:///bundle/index.js:3:9`. */
const LOCATION = /(?:file:\/\/\/bundle\/)?([A-Za-z0-9_@.+\-/]+\.(?:m?js|cjs)):(\d+):(\d+)/g;

/** A source's path as the user knows it: without the `../` an output directory puts before it. */
function sourcePath(source: string): string {
  return source.replace(/^file:\/\//, '').replace(/^(?:\.\.?\/)+/, '');
}

/** Rewrites bundle locations to the user's source (file:line:column) where a source map covers them. */
function mapLocations(line: string, maps: Map<string, SourceMap>): string {
  return line.replace(LOCATION, (whole, module: string, row: string, column: string) => {
    const map = maps.get(module);
    if (!map) return `${module}:${row}:${column}`;
    const entry = map.findEntry(Number(row) - 1, Number(column) - 1);
    if (!entry || !('originalSource' in entry) || !entry.originalSource) return `${module}:${row}:${column}`;
    return `${sourcePath(entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}

/** The uploaded source maps by the module they describe (wrangler names a module's map `<module>.map`). */
function parseMaps(sourceMaps: Record<string, string> | undefined): Map<string, SourceMap> {
  const maps = new Map<string, SourceMap>();
  for (const [name, text] of Object.entries(sourceMaps ?? {})) {
    try {
      const payload = JSON.parse(text) as ConstructorParameters<typeof SourceMap>[0];
      maps.set(name.replace(/\.map$/, ''), new SourceMap(payload));
    } catch {
      // A map that does not parse maps nothing: the bundle's own locations are shown.
    }
  }
  return maps;
}

/**
 * What a person can act on when a Worker does not load: workerd's output without its internal lines and
 * service-name prefixes, each location in the user's source (file:line:column) when the upload carried source
 * maps. The error around it (which Worker, what keeps serving) is WorkerErrors.scriptFailedToStart.
 */
export function loadFailureDetail(workerdOutput: string, sourceMaps?: Record<string, string>): string {
  const maps = parseMaps(sourceMaps);
  const detail = workerdOutput
    .split('\n')
    .map((line) => line.replace(/^service [^:]+: /, ''))
    .filter((line) => line.trim() !== '' && !RUNTIME_INTERNAL.test(line))
    .map((line) => mapLocations(line, maps))
    .join('\n');
  return detail || 'workerd gave no reason.';
}

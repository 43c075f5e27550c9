import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  etag: string;
}

export interface DashboardAssets {
  /** The page every dashboard URL answers with. */
  index: Asset;
  /** Hashed files under /assets/ (the entry script, its lazily loaded chunks, the stylesheet). */
  files: ReadonlyMap<string, Asset>;
  /** The names the index page loads first (what the first-load budget counts). */
  entry: { script: string; style: string | undefined };
  buildMs: number;
}

const UI_DIR = join(import.meta.dirname, 'ui');
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Bundles src/dashboard/ui with esbuild when the server starts (about a second, in memory; nothing written):
 * the sources are the only copy, as everywhere else in Ledge (Node runs TypeScript as it is, there is no build
 * step), so the served bundle can never be older than the code. Charts and other heavy views are split into
 * chunks loaded when first shown; every file is compressed once here.
 */
export async function buildDashboardAssets(): Promise<DashboardAssets> {
  const started = performance.now();
  const result = await build({
    entryPoints: [join(UI_DIR, 'main.ts')],
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    target: 'es2022',
    platform: 'browser',
    write: false,
    outdir: '/assets',
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    legalComments: 'none',
    logLevel: 'silent',
    tsconfig: join(UI_DIR, 'tsconfig.json'),
  });
  const files = new Map<string, Asset>();
  let script: string | undefined;
  let style: string | undefined;
  for (const output of result.outputFiles) {
    const name = output.path.slice(output.path.lastIndexOf('/') + 1);
    const extension = name.slice(name.lastIndexOf('.'));
    files.set(name, asset(TYPES[extension] ?? 'application/octet-stream', Buffer.from(output.contents)));
    if (name.startsWith('main-') && extension === '.js') script = name;
    if (name.startsWith('main-') && extension === '.css') style = name;
  }
  if (!script) throw new Error('the dashboard bundle has no entry script');
  const index = asset('text/html; charset=utf-8', Buffer.from(indexPage(script, style)));
  return { index, files, entry: { script, style }, buildMs: Math.round(performance.now() - started) };
}

function indexPage(script: string, style: string | undefined): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Ledge</title>',
    style ? `<link rel="stylesheet" href="/assets/${style}">` : '',
    `<script type="module" src="/assets/${script}"></script>`,
    '</head>',
    '<body><div id="app"><p class="loading">Loading…</p></div></body>',
    '</html>',
    '',
  ].join('\n');
}

function asset(type: string, body: Buffer): Asset {
  return {
    type,
    body,
    gzip: gzipSync(body, { level: 9 }),
    brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

/** The answer for one asset, compressed the best way the client accepts. */
export function assetResponse(request: Request, file: Asset, headers: Record<string, string>): Response {
  const out = new Headers({ ...headers, 'content-type': file.type, etag: file.etag, vary: 'accept-encoding' });
  if (request.headers.get('if-none-match') === file.etag) return new Response(null, { status: 304, headers: out });
  const accepted = request.headers.get('accept-encoding') ?? '';
  let body = file.body;
  if (/\bbr\b/.test(accepted)) {
    body = file.brotli;
    out.set('content-encoding', 'br');
  } else if (/\bgzip\b/.test(accepted)) {
    body = file.gzip;
    out.set('content-encoding', 'gzip');
  }
  out.set('content-length', String(body.length));
  return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), { status: 200, headers: out });
}

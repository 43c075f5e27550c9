import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import ignoreModule, { type Ignore, type Options } from 'ignore';
import { readEnvelope, type ApiClient } from '../client/index.ts';

/** What wrangler never uploads: the rule files (sent as config) and the ignore file itself. */
/**
 * `ignore` is CommonJS: its function is also its `default` export. Depending on how the types resolve, the import's
 * type is the function or the module object, so take whichever is callable.
 */
const ignore = ((ignoreModule as unknown as { default?: unknown }).default ?? ignoreModule) as (
  options?: Options,
) => Ignore;
const ALWAYS_IGNORED = ['_headers', '_redirects', '.assetsignore'];
const MAX_ASSET_BYTES = 25 * 1024 * 1024;

export interface AssetFile {
  path: string;
  absolute: string;
  hash: string;
  size: number;
}

/**
 * The directory's files as an upload manifest, as wrangler builds it: every file but those `.assetsignore`
 * names (gitignore syntax) and the rule files; a 32-hex-digit content hash of the base64 bytes and the
 * extension (SHA-256 here, where wrangler uses BLAKE3: Ledge does not recompute it).
 */
export async function readAssetDirectory(directory: string): Promise<AssetFile[]> {
  const rules = ignore().add(ALWAYS_IGNORED);
  const ignoreFile = await readFile(join(directory, '.assetsignore'), 'utf8').catch(() => undefined);
  if (ignoreFile !== undefined) rules.add(ignoreFile);
  const files: AssetFile[] = [];
  for (const relative of await readdir(directory, { recursive: true })) {
    const posix = relative.split(sep).join('/');
    if (rules.ignores(posix)) continue;
    const absolute = join(directory, relative);
    const info = await stat(absolute);
    if (!info.isFile()) continue;
    if (info.size > MAX_ASSET_BYTES)
      throw new Error(`${posix} has ${info.size} bytes: an asset may have at most 25 MiB`);
    const bytes = await readFile(absolute);
    const hash = createHash('sha256')
      .update(bytes.toString('base64') + extname(absolute).slice(1))
      .digest('hex')
      .slice(0, 32);
    files.push({ path: `/${posix}`, absolute, hash, size: info.size });
  }
  return files;
}

/** The text of `_headers` and `_redirects` in the directory, sent with the script's assets config. */
export async function assetRules(directory: string): Promise<{ _headers?: string; _redirects?: string }> {
  const read = (name: string) => readFile(join(directory, name), 'utf8').catch(() => undefined);
  const [headers, redirects] = await Promise.all([read('_headers'), read('_redirects')]);
  return {
    ...(headers !== undefined ? { _headers: headers } : {}),
    ...(redirects !== undefined ? { _redirects: redirects } : {}),
  };
}

/**
 * wrangler's assets upload: a session with the manifest, then the files the account lacks (base64, one
 * request per bucket, with the session's token), then the completion token a script upload carries.
 */
export async function uploadAssets(
  api: ApiClient,
  accountId: string,
  script: string,
  files: AssetFile[],
): Promise<{ jwt: string; uploaded: number }> {
  const manifest = Object.fromEntries(files.map((f) => [f.path, { hash: f.hash, size: f.size }]));
  const session = await api.request<{ jwt: string; buckets: string[][] }>(
    'POST',
    `/accounts/${accountId}/workers/scripts/${encodeURIComponent(script)}/assets-upload-session`,
    { body: { manifest } },
  );
  const byHash = new Map(files.map((f) => [f.hash, f]));
  let jwt = session.result.jwt;
  let uploaded = 0;
  for (const bucket of session.result.buckets) {
    const form = new FormData();
    for (const hash of bucket) {
      const bytes = await readFile(byHash.get(hash)!.absolute);
      form.set(hash, new File([bytes.toString('base64')], hash, { type: 'application/null' }));
    }
    // The session's token stands in for the API token on this route.
    const response = await fetch(`${api.apiUrl}/accounts/${accountId}/workers/assets/upload?base64=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session.result.jwt}`, 'user-agent': 'ledge-cli' },
      body: form,
    });
    const answer = await readEnvelope<{ jwt?: string }>(response);
    if (answer.result.jwt) jwt = answer.result.jwt;
    uploaded += bucket.length;
  }
  return { jwt, uploaded };
}

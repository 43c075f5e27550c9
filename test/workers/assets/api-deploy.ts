import { createHash } from 'node:crypto';

/** Where to deploy: a test server, or one node of a cluster. */
export interface ApiTarget {
  apiUrl: string;
  accountId: string;
  tokenHeaders: Record<string, string>;
}

async function apiCall(target: ApiTarget, method: string, path: string, body: unknown) {
  const response = await fetch(`${target.apiUrl}${path}`, {
    method,
    headers: { ...target.tokenHeaders, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { result: Record<string, unknown> } };
}

/** A file as wrangler describes it: a 32-hex-digit hash (here of the path and bytes; Ledge does not recompute it). */
export function manifestEntry(path: string, text: string) {
  return {
    hash: createHash('sha256').update(`${path}\n${text}`).digest('hex').slice(0, 32),
    size: Buffer.byteLength(text),
  };
}

/**
 * Deploys an assets-only site through the v4 API as wrangler does (session, the files the account lacks
 * as base64 multipart, then the script upload with the completion token and `config`), on workers.dev.
 * Throws with the server's answer when a step fails.
 */
export async function deployAssetsSite(
  ledge: ApiTarget,
  script: string,
  files: Record<string, string>,
  config: Record<string, unknown> = {},
): Promise<void> {
  const entries = Object.entries(files).map(([path, text]) => ({ path, text, ...manifestEntry(path, text) }));
  const manifest = Object.fromEntries(entries.map((e) => [e.path, { hash: e.hash, size: e.size }]));
  const session = await apiCall(
    ledge,
    'POST',
    `/accounts/${ledge.accountId}/workers/scripts/${script}/assets-upload-session`,
    {
      manifest,
    },
  );
  if (session.status !== 200) throw new Error(`session: ${JSON.stringify(session.body)}`);
  let jwt = session.body.result.jwt as string;
  for (const bucket of session.body.result.buckets as string[][]) {
    const form = new FormData();
    for (const hash of bucket) {
      const entry = entries.find((e) => e.hash === hash)!;
      form.set(hash, new File([Buffer.from(entry.text).toString('base64')], hash, { type: 'application/null' }));
    }
    const sent = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/assets/upload?base64=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}` },
      body: form,
    });
    const body = (await sent.json()) as { result: { jwt?: string } };
    if (sent.status !== 201 && sent.status !== 202) throw new Error(`upload: ${sent.status} ${JSON.stringify(body)}`);
    if (body.result.jwt) jwt = body.result.jwt;
  }
  const form = new FormData();
  form.set('metadata', JSON.stringify({ assets: { jwt, config }, compatibility_date: '2025-06-01' }));
  const upload = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/${script}`, {
    method: 'PUT',
    headers: ledge.tokenHeaders,
    body: form,
  });
  if (upload.status !== 200) throw new Error(`script upload: ${upload.status} ${await upload.text()}`);
  const subdomain = await apiCall(ledge, 'POST', `/accounts/${ledge.accountId}/workers/scripts/${script}/subdomain`, {
    enabled: true,
  });
  if (subdomain.status !== 200) throw new Error(`subdomain: ${JSON.stringify(subdomain.body)}`);
}

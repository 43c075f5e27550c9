import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';

/** Issue 29, point 5: bucket CORS rules through /client/v4, the official SDK and `wrangler r2 bucket cors`. */
interface Envelope {
  success: boolean;
  result: { rules?: unknown[] } | null;
  errors: { code: number; message: string }[];
}

let ledge: TestLedge;
let sdk: Cloudflare;
beforeAll(async () => {
  ledge = await startLedge();
  sdk = new Cloudflare({ baseURL: ledge.apiUrl, apiToken: ledge.apiToken, maxRetries: 0 });
  for (const name of ['cors-api', 'cors-sdk', 'cors-wrangler', 'cors-gone'])
    await ledge.server.platform.storage.buckets.create(ledge.accountId, { name });
});
afterAll(async () => ledge?.close());

const corsUrl = (bucket: string) => `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/${bucket}/cors`;

async function api(method: string, url: string, body?: unknown) {
  const response = await fetch(url, {
    method,
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

const rule = {
  id: 'uploads',
  allowed: { origins: ['http://localhost:3000'], methods: ['GET', 'PUT'], headers: ['content-type'] },
  exposeHeaders: ['ETag'],
  maxAgeSeconds: 3600,
};

describe('the /cors routes', () => {
  it('answers 10059 before any configuration, stores, replaces and deletes the rule set', async () => {
    const none = await api('GET', corsUrl('cors-api'));
    expect(none.status).toBe(404);
    expect(none.body.errors[0]).toEqual({ code: 10059, message: 'The CORS configuration does not exist.' });

    expect((await api('PUT', corsUrl('cors-api'), { rules: [rule] })).status).toBe(200);
    expect((await api('GET', corsUrl('cors-api'))).body.result).toEqual({ rules: [rule] });

    const second = { allowed: { origins: ['*'], methods: ['GET'] } };
    expect((await api('PUT', corsUrl('cors-api'), { rules: [second] })).status).toBe(200);
    expect((await api('GET', corsUrl('cors-api'))).body.result).toEqual({ rules: [second] });

    expect((await api('PUT', corsUrl('cors-api'), { rules: [] })).status).toBe(200);
    expect((await api('GET', corsUrl('cors-api'))).body.result).toEqual({ rules: [] });

    expect((await api('DELETE', corsUrl('cors-api'))).status).toBe(200);
    expect((await api('GET', corsUrl('cors-api'))).status).toBe(404);
    // Deleting again is not an error (as S3's DeleteBucketCors).
    expect((await api('DELETE', corsUrl('cors-api'))).status).toBe(200);
  });

  it('refuses bad rules with 10040 and a message naming the problem, storing nothing', async () => {
    const cases: [unknown, RegExp][] = [
      [{ rules: [{ allowed: { origins: ['https://a.example/'], methods: ['GET'] } }] }, /must not have a path/],
      [{ rules: [{ allowed: { origins: ['*'], methods: ['PATCH'] } }] }, /methods/],
      [{ rules: [{ allowed: { origins: ['*'], methods: ['GET'] }, maxAgeSeconds: -1 }] }, /maxAgeSeconds/],
      [{ rules: [{ allowed: { origins: ['*'], methods: ['GET'], headers: ['a b'] } }] }, /not a header name/],
      [{ rules: [{ AllowedOrigins: ['*'], AllowedMethods: ['GET'] }] }, /allowed/],
      ['{"rules": [', /Malformed JSON/],
    ];
    for (const [body, message] of cases) {
      const answer = await api('PUT', corsUrl('cors-api'), body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.errors[0]?.code).toBe(10040);
      expect(answer.body.errors[0]?.message).toMatch(message);
    }
    expect((await api('GET', corsUrl('cors-api'))).status).toBe(404);
  });

  it('answers 10006 for a bucket that does not exist, and forgets the rules of a deleted bucket', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const answer = await api(method, corsUrl('no-such-bucket'), method === 'PUT' ? { rules: [rule] } : undefined);
      expect(answer.status).toBe(404);
      expect(answer.body.errors[0]?.code).toBe(10006);
    }
    await api('PUT', corsUrl('cors-gone'), { rules: [rule] });
    await ledge.server.platform.storage.buckets.delete(ledge.accountId, 'cors-gone');
    await ledge.server.platform.storage.buckets.create(ledge.accountId, { name: 'cors-gone' });
    expect((await api('GET', corsUrl('cors-gone'))).status).toBe(404);
  });

  it('refuses writes with a read-only token', async () => {
    const platform = ledge.server.platform;
    const owner = await platform.accounts.getUserByEmail(ledge.email);
    const { value } = await platform.accounts.createToken({ userId: owner!.id, name: 'ro', readOnly: true });
    const response = await fetch(corsUrl('cors-api'), {
      method: 'PUT',
      headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [rule] }),
    });
    expect(response.status).toBe(403);
  });
});

describe('the official SDK', () => {
  it('updates, gets and deletes a bucket CORS policy', async () => {
    await sdk.r2.buckets.cors.update('cors-sdk', {
      account_id: ledge.accountId,
      rules: [{ allowed: { origins: ['https://app.example'], methods: ['GET', 'HEAD'] }, maxAgeSeconds: 60 }],
    });
    const got = await sdk.r2.buckets.cors.get('cors-sdk', { account_id: ledge.accountId });
    expect(got.rules).toEqual([
      { allowed: { origins: ['https://app.example'], methods: ['GET', 'HEAD'] }, maxAgeSeconds: 60 },
    ]);
    await sdk.r2.buckets.cors.delete('cors-sdk', { account_id: ledge.accountId });
    const error = await sdk.r2.buckets.cors.get('cors-sdk', { account_id: ledge.accountId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Cloudflare.NotFoundError);
  });
});

describe('wrangler r2 bucket cors', () => {
  const wrangler = (args: string[]) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });

  it('sets from a file, lists and deletes', async () => {
    const file = join(tempDir('cors-file-'), 'cors.json');
    writeFileSync(file, JSON.stringify({ rules: [rule] }));
    const set = await wrangler(['r2', 'bucket', 'cors', 'set', 'cors-wrangler', '--file', file, '--force']);
    expect(set.stdout + set.stderr).toContain("Set CORS configuration for bucket 'cors-wrangler'");
    expect(set.code).toBe(0);

    const list = await wrangler(['r2', 'bucket', 'cors', 'list', 'cors-wrangler']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('http://localhost:3000');
    expect(list.stdout).toContain('GET, PUT');
    expect(list.stdout).toContain('content-type');
    expect(list.stdout).toContain('ETag');
    expect(list.stdout).toContain('3600');

    const removed = await wrangler(['r2', 'bucket', 'cors', 'delete', 'cors-wrangler', '--force']);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain("CORS configuration deleted for bucket 'cors-wrangler'");
    const after = await wrangler(['r2', 'bucket', 'cors', 'list', 'cors-wrangler']);
    // As on R2: a bucket without a configuration is the API's 10059, which wrangler reports.
    expect(after.code).not.toBe(0);
    expect(after.stdout + after.stderr).toContain('10059');
  }, 180_000);
});

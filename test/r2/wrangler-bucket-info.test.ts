import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';

/**
 * `wrangler r2 bucket info` reads the object count and size from R2's storage analytics
 * (`POST /client/v4/graphql`, dataset r2StorageAdaptiveGroups): Ledge answers that query from what the bucket holds.
 */
describe('wrangler r2 bucket info and the GraphQL analytics it asks', () => {
  let ledge: TestLedge;
  const wrangler = (args: string[]) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
  const graphql = (body: unknown, token = ledge.apiToken) =>
    fetch(`${ledge.apiUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    ledge = await startLedge();
    const headers = { authorization: `Bearer ${ledge.apiToken}` };
    const buckets = `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets`;
    const created = await fetch(buckets, { method: 'POST', headers, body: JSON.stringify({ name: 'counted' }) });
    expect(created.status).toBe(200);
    for (const [key, size] of [
      ['a', 1000],
      ['b', 2500],
      ['c', 0],
    ] as const) {
      const put = await fetch(`${buckets}/counted/objects/${key}`, {
        method: 'PUT',
        headers,
        body: new Uint8Array(size),
      });
      expect(put.status).toBe(200);
    }
  });
  afterAll(async () => ledge?.close());

  it('shows the real object count and size', async () => {
    const info = await wrangler(['r2', 'bucket', 'info', 'counted']);
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toMatch(/object_count:\s+3/);
    // 3,500 bytes of payload and the keys' and metadata's bytes: wrangler prints them as "3.5x kB".
    expect(info.stdout).toMatch(/bucket_size:\s+3\.\d+ kB/);
  });

  it('validates the query: unknown datasets and fields are GraphQL errors, other accounts are not seen', async () => {
    const unknown = await graphql({ query: '{ viewer { accounts(filter: {}) { httpRequests1dGroups { sum } } } }' });
    expect(unknown.status).toBe(200);
    const body = (await unknown.json()) as { data: unknown; errors: { message: string }[] };
    expect(body.data).toBeNull();
    expect(body.errors[0]!.message).toContain('Cannot query field "httpRequests1dGroups" on type "Account"');
    const syntax = (await (await graphql({ query: '{ viewer {' })).json()) as { errors: { message: string }[] };
    expect(syntax.errors[0]!.message).toContain('Syntax Error');
    expect((await graphql({ nope: 1 })).status).toBe(400);
    const other = (await (
      await graphql({
        query:
          '{ viewer { accounts(filter: { accountTag: "ffffffffffffffffffffffffffffffff" }) { r2StorageAdaptiveGroups(limit: 1) { max { objectCount } } } } }',
      })
    ).json()) as { data: { viewer: { accounts: unknown[] } } };
    expect(other.data.viewer.accounts).toEqual([]);
    const window = (await (
      await graphql({
        query: `{ viewer { accounts(filter: { accountTag: "${ledge.accountId}" }) {
          r2StorageAdaptiveGroups(limit: 1, filter: { bucketName: "counted", datetime_geq: "2999-01-01T00:00:00Z" }) { max { objectCount } } } } }`,
      })
    ).json()) as { data: { viewer: { accounts: { r2StorageAdaptiveGroups: unknown[] }[] } } };
    expect(window.data.viewer.accounts[0]!.r2StorageAdaptiveGroups).toEqual([]);
  });
});

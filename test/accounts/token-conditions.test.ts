import { createHash } from 'node:crypto';
import { CreateBucketCommand, ListBucketsCommand } from '@aws-sdk/client-s3';
import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conditionWithin, requestIpAllowed } from '../../src/shared/request-ip.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { failure, s3Client } from '../s3/helpers.ts';

const EDIT = 'c8fed203ed3043cba015a93ad1616f1f';

describe('request_ip matching', () => {
  it('matches IPv4 and IPv6 CIDRs, a bare address, and IPv4 clients on a dual-stack socket', () => {
    const only = (ranges: string[], not: string[] = []) => ({ request_ip: { in: ranges, not_in: not } });
    expect(requestIpAllowed(only(['203.0.113.0/24']), '203.0.113.9')).toBe(true);
    expect(requestIpAllowed(only(['203.0.113.0/24']), '::ffff:203.0.113.9')).toBe(true);
    expect(requestIpAllowed(only(['203.0.113.0/24']), '198.51.100.1')).toBe(false);
    expect(requestIpAllowed(only(['2001:db8::/32']), '2001:db8:1::7')).toBe(true);
    expect(requestIpAllowed(only(['2001:db8::/32']), '2001:db9::7')).toBe(false);
    expect(requestIpAllowed(only(['198.51.100.7']), '198.51.100.7')).toBe(true);
    expect(requestIpAllowed(only([], ['10.0.0.0/8']), '10.2.3.4')).toBe(false);
    expect(requestIpAllowed(only(['10.0.0.0/8'], ['10.1.0.0/16']), '10.1.2.3')).toBe(false);
    expect(requestIpAllowed(only(['10.0.0.0/8'], ['10.1.0.0/16']), '10.2.2.3')).toBe(true);
    // An unknown address never passes an `in` list.
    expect(requestIpAllowed(only(['0.0.0.0/0']), undefined)).toBe(false);
    expect(requestIpAllowed(null, undefined)).toBe(true);
  });

  it('knows when one condition is at least as narrow as another', () => {
    const parent = { request_ip: { in: ['10.0.0.0/8'], not_in: ['10.9.0.0/16'] } };
    expect(conditionWithin({ request_ip: { in: ['10.1.0.0/16'], not_in: ['10.9.0.0/16'] } }, parent)).toBe(true);
    expect(conditionWithin({ request_ip: { in: ['10.1.0.0/16'], not_in: ['10.0.0.0/12'] } }, parent)).toBe(true);
    expect(conditionWithin({ request_ip: { in: ['10.1.0.0/16'] } }, parent)).toBe(false);
    expect(conditionWithin({ request_ip: { in: ['11.0.0.0/16'], not_in: ['10.9.0.0/16'] } }, parent)).toBe(false);
    expect(conditionWithin({ request_ip: { in: ['0.0.0.0/0'], not_in: ['10.9.0.0/16'] } }, parent)).toBe(false);
    expect(conditionWithin(undefined, parent)).toBe(false);
    expect(conditionWithin(undefined, null)).toBe(true);
  });
});

/** Cloudflare's token `condition.request_ip` and lifetimes, through the API, S3, the dashboard and tail. */
describe('token conditions and lifetimes', () => {
  let ledge: TestLedge;
  let owner: Cloudflare;
  const policies = (account: string) => [
    {
      effect: 'allow' as const,
      permission_groups: [{ id: EDIT }],
      resources: { [`com.cloudflare.api.account.${account}`]: '*' },
    },
  ];
  const raw = async (token: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${ledge.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { result: never; errors: { code: number }[] } };
  };
  const create = (token: string, body: Record<string, unknown>) =>
    raw(token, 'POST', '/user/tokens', { name: 'conditioned', policies: policies(ledge.accountId), ...body });

  beforeAll(async () => {
    ledge = await startLedge();
    owner = new Cloudflare({ baseURL: ledge.apiUrl, apiToken: ledge.apiToken, maxRetries: 0 });
  });
  afterAll(async () => ledge?.close());

  it('stores and returns condition.request_ip, and refuses what is not a CIDR', async () => {
    const condition = { request_ip: { in: ['127.0.0.0/8', '2001:db8::/32'], not_in: ['127.0.0.2/32'] } };
    const created = await owner.user.tokens.create({ name: 'home', policies: policies(ledge.accountId), condition });
    expect(created.condition).toEqual(condition);
    expect((await owner.user.tokens.get(created.id!)).condition).toEqual(condition);
    expect((await raw(created.value!, 'GET', `/accounts/${ledge.accountId}/r2/buckets`)).status).toBe(200);
    for (const bad of [['10.0.0.0/33'], ['not-an-ip'], ['10.0.0.0/8/1']]) {
      const refused = await create(ledge.apiToken, { condition: { request_ip: { in: bad } } });
      expect(refused.status, bad[0]).toBe(400);
    }
    expect((await create(ledge.apiToken, { condition: { elsewhere: {} } })).status).toBe(400);
  });

  it('a token used from outside its request_ip is refused on every door: API, S3, dashboard, tail', async () => {
    // The tests connect from 127.0.0.1: a token allowed only from 10.0.0.0/8, and one denied 127.0.0.0/8.
    for (const request_ip of [{ in: ['10.0.0.0/8'] }, { not_in: ['127.0.0.0/8', '::1/128'] }]) {
      const made = await create(ledge.apiToken, { condition: { request_ip } });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      const { id, value } = made.body.result as { id: string; value: string };
      const api = await raw(value, 'GET', `/accounts/${ledge.accountId}/r2/buckets`);
      expect(api.status).toBe(403);
      expect(api.body.errors[0]!.code).toBe(9109);
      expect((await raw(value, 'GET', '/user/tokens/verify')).status).toBe(403);

      // The token's S3 key pair, as R2 makes it: its id, and the SHA-256 hex of its value.
      const s3 = s3Client(ledge, {
        accessKeyId: id,
        secretAccessKey: createHash('sha256').update(value).digest('hex'),
      });
      expect((await failure(s3.send(new ListBucketsCommand({})))).name).toBe('AccessDenied');
      expect((await failure(s3.send(new CreateBucketCommand({ Bucket: 'from-afar' })))).name).toBe('AccessDenied');
      s3.destroy();

      const dashboard = await fetch(`http://127.0.0.1:${ledge.port}/dashboard/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_token: value }),
      });
      expect(dashboard.status).toBe(403);
      expect(dashboard.headers.get('set-cookie')).toBeNull();

      const tail = await raw(value, 'POST', `/accounts/${ledge.accountId}/workers/scripts/any/tails`, { filters: [] });
      expect(tail.status).toBe(403);
    }
  });

  it('a token makes no token that outlives it or reaches from more addresses', async () => {
    const expires = new Date(Date.now() + 3600_000).toISOString();
    const parent = await create(ledge.apiToken, {
      expires_on: expires,
      condition: { request_ip: { in: ['127.0.0.0/8'] } },
    });
    const value = (parent.body.result as { value: string }).value;
    const narrow = { request_ip: { in: ['127.0.0.1/32'] } };
    // No expiry, or a later one: refused.
    expect((await create(value, { condition: narrow })).status).toBe(400);
    const later = new Date(Date.now() + 7200_000).toISOString();
    const outlives = await create(value, { condition: narrow, expires_on: later });
    expect(outlives.status).toBe(400);
    expect(outlives.body.errors[0]!.code).toBe(1001);
    // No condition, or a wider one: refused.
    expect((await create(value, { expires_on: expires })).status).toBe(400);
    const wider = await create(value, { expires_on: expires, condition: { request_ip: { in: ['0.0.0.0/0'] } } });
    expect(wider.status).toBe(400);
    // Within both: made.
    const sooner = new Date(Date.now() + 1800_000).toISOString();
    const child = await create(value, { expires_on: sooner, condition: narrow });
    expect(child.status).toBe(200);
    expect(child.body.result).toMatchObject({ expires_on: sooner, condition: narrow });
  });
});

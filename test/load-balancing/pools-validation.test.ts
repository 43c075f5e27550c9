import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { lbClient, poolBody, type LbCall } from './helpers.ts';

let ledge: TestLedge;
let call: LbCall;
beforeAll(async () => {
  ledge = await startLedge();
  call = lbClient(ledge);
});
afterAll(() => ledge.close());

async function expectValidationError(method: string, path: string, body: unknown, fragment: string | RegExp) {
  const before = (await call('GET', '/pools?per_page=1000')).body.result_info.total_count;
  const res = await call(method, path, body);
  expect(res.status).toBe(400);
  expect(res.body.success).toBe(false);
  expect(res.body.errors[0].code).toBe(1002);
  expect(res.body.errors[0].message).toMatch(/: validation failed$/);
  expect(res.body.errors[0].message).toMatch(fragment);
  expect((await call('GET', '/pools?per_page=1000')).body.result_info.total_count).toBe(before);
}

const origin = { name: 'o1', address: '192.0.2.1' };

describe('pool validation (400, code 1002, nothing written)', () => {
  it.each([
    ['a name with a space', { name: 'bad name', origins: [origin] }, /name/],
    ['a name with a dot', { name: 'bad.name', origins: [origin] }, /name/],
    ['an empty name', { name: '', origins: [origin] }, /name/],
    ['a missing name', { origins: [origin] }, /name/],
  ])('rejects %s', async (_label, body, fragment) => {
    await expectValidationError('POST', '/pools', body, fragment);
  });

  it('rejects a pool without origins', async () => {
    await expectValidationError(
      'POST',
      '/pools',
      { name: 'empty', origins: [] },
      /origins: a pool needs at least one origin/,
    );
  });

  it('rejects a missing origins field', async () => {
    await expectValidationError('POST', '/pools', { name: 'no-origins' }, /origins/);
  });

  it.each([[-0.1], [1.5], ['1']])('rejects an origin weight of %s', async (weight) => {
    await expectValidationError(
      'POST',
      '/pools',
      { name: 'w', origins: [{ ...origin, weight }] },
      /origins\.0\.weight/,
    );
  });

  it('rejects a latitude without a longitude', async () => {
    await expectValidationError(
      'POST',
      '/pools',
      poolBody('lat', { latitude: 10 }),
      /latitude and longitude must be given together/,
    );
  });

  it('rejects a longitude without a latitude', async () => {
    await expectValidationError('POST', '/pools', poolBody('lon', { longitude: 10 }), /latitude and longitude/);
  });

  it('rejects a latitude out of range', async () => {
    await expectValidationError('POST', '/pools', poolBody('lat2', { latitude: 91, longitude: 0 }), /latitude/);
  });

  it.each([['not an address!'], ['-bad-.example.com'], ['http://example.com'], ['']])(
    'rejects the origin address %j',
    async (address) => {
      await expectValidationError(
        'POST',
        '/pools',
        { name: 'addr', origins: [{ name: 'o', address }] },
        /origins\.0\.address/,
      );
    },
  );

  it.each([['10.1.2.3'], ['2001:db8::5'], ['origin-1.example.com']])(
    'accepts the origin address %s',
    async (address) => {
      const res = await call('POST', '/pools', {
        name: `ok-${address.replace(/[^a-z0-9]/gi, '-')}`,
        origins: [{ name: 'o', address }],
      });
      expect(res.status).toBe(200);
    },
  );

  it.each([['not-an-email'], ['ops@example.com,,x'], ['ops@example.com; dev@example.com']])(
    'rejects notification_email %j',
    async (email) => {
      await expectValidationError(
        'POST',
        '/pools',
        poolBody('mail', { notification_email: email }),
        /notification_email/,
      );
    },
  );

  it('rejects an unknown field', async () => {
    await expectValidationError('POST', '/pools', poolBody('unknown', { colour: 'blue' }), /Unrecognized key.*colour/);
  });

  it('rejects an unknown field inside an origin', async () => {
    await expectValidationError(
      'POST',
      '/pools',
      { name: 'unknown2', origins: [{ ...origin, priority: 1 }] },
      /origins\.0/,
    );
  });

  it('rejects an unknown monitor id', async () => {
    await expectValidationError(
      'POST',
      '/pools',
      poolBody('mon', { monitor: 'f'.repeat(32) }),
      /monitor: no monitor with id/,
    );
  });

  it('rejects a monitor id of another account', async () => {
    const { body } = await call('POST', '/monitors', {});
    const otherAccount = await ledge.server.platform.accounts.createAccount({ name: 'other' });
    await ledge.server.platform.db.run('UPDATE lb_monitors SET account_id = ? WHERE id = ?', [
      otherAccount.id,
      body.result.id,
    ]);
    await expectValidationError('POST', '/pools', poolBody('mon2', { monitor: body.result.id }), /monitor: no monitor/);
  });

  it('rejects minimum_origins above the number of origins', async () => {
    await expectValidationError('POST', '/pools', poolBody('min', { minimum_origins: 2 }), /minimum_origins/);
  });

  it('rejects duplicate origin names', async () => {
    await expectValidationError(
      'POST',
      '/pools',
      { name: 'dup-origins', origins: [origin, origin] },
      /duplicate origin name/,
    );
  });

  it('rejects an unknown check region', async () => {
    await expectValidationError('POST', '/pools', poolBody('region', { check_regions: ['MARS'] }), /check_regions/);
  });

  it('rejects malformed JSON', async () => {
    await expectValidationError('POST', '/pools', '{"name":', /Malformed JSON/);
  });

  it('rejects a second pool with the same name: 400, code 1003', async () => {
    expect((await call('POST', '/pools', poolBody('taken'))).status).toBe(200);
    const res = await call('POST', '/pools', poolBody('taken'));
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe(1003);
  });

  it('rejects renaming a pool onto an existing name (PATCH): 1003', async () => {
    await call('POST', '/pools', poolBody('first-name'));
    const second = (await call('POST', '/pools', poolBody('second-name'))).body.result;
    const res = await call('PATCH', `/pools/${second.id}`, { name: 'first-name' });
    expect(res.body.errors[0].code).toBe(1003);
    expect((await call('GET', `/pools/${second.id}`)).body.result.name).toBe('second-name');
  });

  it('validates PUT and PATCH like POST', async () => {
    const pool = (await call('POST', '/pools', poolBody('to-break'))).body.result;
    await expectValidationError('PUT', `/pools/${pool.id}`, { name: 'to-break', origins: [] }, /origins/);
    await expectValidationError('PATCH', `/pools/${pool.id}`, { origins: [{ ...origin, weight: 2 }] }, /weight/);
    await expectValidationError('PATCH', `/pools/${pool.id}`, [1, 2], /object/);
    expect((await call('GET', `/pools/${pool.id}`)).body.result.origins).toEqual(pool.origins);
  });
});

describe('pagination bounds', () => {
  it.each([
    ['page=0'],
    ['page=-1'],
    ['page=abc'],
    ['per_page=0'],
    ['per_page=1001'],
    ['limit=0'],
    ['limit=5000'],
    ['offset=-3'],
    ['page=2&limit=5'],
  ])('rejects %s', async (query) => {
    const res = await call('GET', `/pools?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe(1002);
    expect(res.body.errors[0].message).toMatch(/validation failed$/);
  });
});

describe('ids of another account', () => {
  it('answers 404 for a pool id that belongs to another account, and changes nothing', async () => {
    const pool = (await call('POST', '/pools', poolBody('mine'))).body.result;
    const otherAccount = await ledge.server.platform.accounts.createAccount({ name: 'elsewhere' });
    await ledge.server.platform.db.run('UPDATE lb_pools SET account_id = ? WHERE id = ?', [otherAccount.id, pool.id]);
    for (const [method, path, body] of [
      ['GET', `/pools/${pool.id}`],
      ['PATCH', `/pools/${pool.id}`, { description: 'x' }],
      ['PUT', `/pools/${pool.id}`, poolBody('mine')],
      ['DELETE', `/pools/${pool.id}`],
      ['GET', `/pools/${pool.id}/health`],
      ['GET', `/pools/${pool.id}/references`],
      ['POST', `/pools/${pool.id}/preview`, {}],
    ] as const) {
      const res = await call(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect(await ledge.server.platform.db.get('SELECT 1 AS x FROM lb_pools WHERE id = ?', [pool.id])).toBeDefined();
  });

  it('answers 403 under another account path', async () => {
    const foreign = lbClient(ledge, 'a'.repeat(32));
    expect((await foreign('GET', '/pools')).status).toBe(403);
  });
});

describe('concurrent writes', () => {
  it('gives 1003 to every loser of a race on one name, never a 500', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => call('POST', '/pools', poolBody('raced-name'))));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const loser of answers.filter((a) => a.status !== 200)) {
      expect(loser.status).toBe(400);
      expect(loser.body.errors[0].code).toBe(1003);
    }
  });
});

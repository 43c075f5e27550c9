import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { startWorkerd } from './workerd-harness.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { waitFor } from '../helpers/wait.ts';

interface Envelope {
  success: boolean;
  result: { rules?: Record<string, unknown>[] } | null;
  errors: { code: number; message: string }[];
}

let ledge: TestLedge;
/** The server's time: objects are stamped with it and the lifecycle job runs and ages them on it. */
const clock = new ManualClock();
beforeAll(async () => {
  // The lifecycle job runs every 200 ms of the clock here, so an object with a 1-second maxAge expires once
  // the clock has moved a little over a second.
  ledge = await startLedge({ env: { LEDGE_R2_LIFECYCLE_INTERVAL_MS: '200' }, clock });
  for (const name of ['rules', 'expiry', 'transitions', 'dated', 'wrangler-rules']) {
    await ledge.server.platform.storage.buckets.create(ledge.accountId, { name });
  }
});
afterAll(async () => ledge?.close());

const bucketUrl = (bucket: string) => `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/${bucket}`;

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(path, {
    method,
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

async function putObject(bucket: string, key: string, text: string): Promise<void> {
  const response = await fetch(`${bucketUrl(bucket)}/objects/${key}`, {
    method: 'PUT',
    headers: ledge.tokenHeaders,
    body: text,
  });
  expect(response.status).toBe(200);
}

const bucketRecord = async (name: string) => (await ledge.server.platform.storage.getBucket(ledge.accountId, name))!;

describe('lifecycle rules API', () => {
  const expireRule = {
    id: 'expire-logs',
    enabled: true,
    conditions: { prefix: 'logs/' },
    deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } },
  };

  it('starts empty, stores a rule set, and PUT replaces the whole set', async () => {
    expect((await api('GET', `${bucketUrl('rules')}/lifecycle`)).body.result).toEqual({ rules: [] });
    const put = await api('PUT', `${bucketUrl('rules')}/lifecycle`, { rules: [expireRule] });
    expect(put.status).toBe(200);
    expect(put.body.success).toBe(true);
    expect((await api('GET', `${bucketUrl('rules')}/lifecycle`)).body.result).toEqual({ rules: [expireRule] });

    const second = {
      id: 'all',
      enabled: false,
      conditions: {},
      abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 604800 } },
      storageClassTransitions: [
        { condition: { type: 'Date', date: '2030-01-01T00:00:00.000Z' }, storageClass: 'InfrequentAccess' },
      ],
    };
    await api('PUT', `${bucketUrl('rules')}/lifecycle`, { rules: [second] });
    const got = await api('GET', `${bucketUrl('rules')}/lifecycle`);
    // The prefix condition is always shown ("" covers every object), as R2 does.
    expect(got.body.result).toEqual({ rules: [{ ...second, conditions: { prefix: '' } }] });
    await api('PUT', `${bucketUrl('rules')}/lifecycle`, { rules: [] });
    expect((await api('GET', `${bucketUrl('rules')}/lifecycle`)).body.result).toEqual({ rules: [] });
  });

  it('answers 404/10006 for a bucket that does not exist', async () => {
    for (const method of ['GET', 'PUT']) {
      const { status, body } = await api(
        method,
        `${bucketUrl('no-such-bucket')}/lifecycle`,
        method === 'PUT' ? { rules: [expireRule] } : undefined,
      );
      expect(status).toBe(404);
      expect(body.errors[0]!.code).toBe(10006);
    }
  });

  it.each([
    ['a duplicate id', [expireRule, expireRule]],
    ['a rule with no action', [{ id: 'x', enabled: true, conditions: { prefix: '' } }]],
    ['a negative maxAge', [{ ...expireRule, deleteObjectsTransition: { condition: { type: 'Age', maxAge: -1 } } }]],
    ['an unknown condition type', [{ ...expireRule, deleteObjectsTransition: { condition: { type: 'Size' } } }]],
    [
      'a date that is not a date',
      [{ ...expireRule, deleteObjectsTransition: { condition: { type: 'Date', date: 'soon' } } }],
    ],
    [
      'a storage class R2 cannot transition to',
      [
        {
          ...expireRule,
          storageClassTransitions: [{ condition: { type: 'Age', maxAge: 1 }, storageClass: 'Glacier' }],
        },
      ],
    ],
    ['a missing enabled flag', [{ id: 'x', deleteObjectsTransition: {} }]],
  ])('refuses %s with 400/10040 and keeps the previous rules', async (_label, rules) => {
    await api('PUT', `${bucketUrl('rules')}/lifecycle`, { rules: [expireRule] });
    const { status, body } = await api('PUT', `${bucketUrl('rules')}/lifecycle`, { rules });
    expect(status).toBe(400);
    expect(body.success).toBe(false);
    expect(body.errors[0]!.code).toBe(10040);
    expect((await api('GET', `${bucketUrl('rules')}/lifecycle`)).body.result).toEqual({ rules: [expireRule] });
  });

  it('refuses a body that is not JSON with 400', async () => {
    const response = await fetch(`${bucketUrl('rules')}/lifecycle`, {
      method: 'PUT',
      headers: ledge.tokenHeaders,
      body: '{"rules": [',
    });
    expect(response.status).toBe(400);
  });
});

describe('the lifecycle job', () => {
  it('expires objects under the rule prefix once their maxAge has passed, not before, and leaves the rest', async () => {
    await putObject('expiry', 'tmp/a.txt', 'short-lived');
    await putObject('expiry', 'tmp/b.txt', 'short-lived');
    await putObject('expiry', 'keep/c.txt', 'stays');
    const put = await api('PUT', `${bucketUrl('expiry')}/lifecycle`, {
      rules: [
        {
          id: 'tmp-1s',
          enabled: true,
          conditions: { prefix: 'tmp/' },
          deleteObjectsTransition: { condition: { type: 'Age', maxAge: 1 } },
        },
      ],
    });
    expect(put.status).toBe(200);
    const bucket = await bucketRecord('expiry');
    const storage = ledge.server.platform.storage;
    const objects = storage.objects;
    // Not before their age: half a second after their upload, a pass deletes nothing.
    await clock.advance(500);
    expect(await storage.lifecycle.run()).toMatchObject({ deleted: 0 });
    expect(await objects.head(bucket, 'tmp/a.txt')).toBeDefined();
    // Past it, the job's own next pass (on the clock) deletes them. The clock keeps moving while we wait: on
    // PostgreSQL each pass first takes the job's lease among nodes, which runs on the database's time, so a
    // pass fired within the previous one's lease is skipped and a later one does the work.
    await clock.advance(1_000);
    await waitFor(async () => {
      if (!(await objects.head(bucket, 'tmp/a.txt')) && !(await objects.head(bucket, 'tmp/b.txt'))) return true;
      await clock.advance(200);
      return false;
    }, 'the lifecycle job to delete objects past their 1 s maxAge');
    expect(await objects.head(bucket, 'keep/c.txt')).toBeDefined();
    const read = await fetch(`${bucketUrl('expiry')}/objects/tmp/a.txt`, { headers: ledge.tokenHeaders });
    expect(read.status).toBe(404);
    await read.body?.cancel();
  });

  it('moves old objects to InfrequentAccess, aborts old uploads, and ignores disabled rules', async () => {
    const storage = ledge.server.platform.storage;
    const bucket = await bucketRecord('transitions');
    await putObject('transitions', 'cold/x.bin', 'cold data');
    await putObject('transitions', 'hot/y.bin', 'hot data');
    const upload = await storage.multipart.create(bucket, 'uploads/big.bin');
    const other = await storage.multipart.create(bucket, 'elsewhere/big.bin');
    await api('PUT', `${bucketUrl('transitions')}/lifecycle`, {
      rules: [
        {
          id: 'cold',
          enabled: true,
          conditions: { prefix: 'cold/' },
          storageClassTransitions: [{ condition: { type: 'Age', maxAge: 3600 }, storageClass: 'InfrequentAccess' }],
        },
        {
          id: 'uploads',
          enabled: true,
          conditions: { prefix: 'uploads/' },
          abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 3600 } },
        },
        {
          id: 'disabled',
          enabled: false,
          conditions: { prefix: '' },
          deleteObjectsTransition: { condition: { type: 'Age', maxAge: 0 } },
        },
      ],
    });
    // Nothing is an hour old yet: a pass now changes nothing.
    expect(await storage.lifecycle.run(Date.now())).toEqual({ deleted: 0, aborted: 0, transitioned: 0 });
    // A pass as of two hours from now applies the age conditions.
    const later = await storage.lifecycle.run(Date.now() + 7200_000);
    expect(later).toEqual({ deleted: 0, aborted: 1, transitioned: 1 });
    expect((await storage.objects.head(bucket, 'cold/x.bin'))!.storageClass).toBe('InfrequentAccess');
    expect((await storage.objects.head(bucket, 'hot/y.bin'))!.storageClass).toBe('Standard');
    await expect(
      storage.multipart.uploadPart(bucket, 'uploads/big.bin', upload.uploadId, 1, oneChunk('x')),
    ).rejects.toMatchObject({ code: 10024 });
    expect(
      await storage.multipart.uploadPart(bucket, 'elsewhere/big.bin', other.uploadId, 1, oneChunk('x')),
    ).toBeDefined();
    // The binding sees the new storage class, through real workerd.
    const workerd = await startWorkerd(
      join(import.meta.dirname, 'fixtures/storage-class-worker.js'),
      ledge.server.platform.r2Backend.workerdService(ledge.accountId, 'transitions'),
    );
    try {
      const seen = async (key: string) => (await fetch(`${workerd.url}/?key=${encodeURIComponent(key)}`)).json();
      expect(await seen('cold/x.bin')).toEqual({
        head: 'InfrequentAccess',
        get: 'InfrequentAccess',
        body: 'cold data',
      });
      expect(await seen('hot/y.bin')).toEqual({ head: 'Standard', get: 'Standard', body: 'hot data' });
    } finally {
      await workerd.stop();
    }
  });

  it('expires every matching object once a Date condition has passed, none before', async () => {
    const storage = ledge.server.platform.storage;
    const bucket = await bucketRecord('dated');
    await putObject('dated', 'past/a', 'a');
    await putObject('dated', 'future/b', 'b');
    const dated = (id: string, prefix: string, date: string) => ({
      id,
      enabled: true,
      conditions: { prefix },
      deleteObjectsTransition: { condition: { type: 'Date', date } },
    });
    await api('PUT', `${bucketUrl('dated')}/lifecycle`, {
      rules: [
        dated('past', 'past/', '2000-01-01T00:00:00.000Z'),
        dated('future', 'future/', '2999-01-01T00:00:00.000Z'),
      ],
    });
    await storage.lifecycle.run();
    expect(await storage.objects.head(bucket, 'past/a')).toBeUndefined();
    expect(await storage.objects.head(bucket, 'future/b')).toBeDefined();
  });

  it('never deletes an object overwritten after the job read it', async () => {
    const storage = ledge.server.platform.storage;
    const bucket = await bucketRecord('transitions');
    await putObject('transitions', 'race/k', 'old');
    const old = (await storage.objects.head(bucket, 'race/k'))!;
    await putObject('transitions', 'race/k', 'new');
    const { SqlMetadataStore } = await import('../../src/storage/index.ts');
    const store = new SqlMetadataStore(ledge.server.platform.db, ledge.server.platform.clock);
    // The job's delete names the version it read; the newer version survives.
    expect(await store.deleteObjectVersions(bucket.id, [{ key: 'race/k', version: old.version }])).toEqual([]);
    const current = (await storage.objects.head(bucket, 'race/k'))!;
    expect(current.version).not.toBe(old.version);
    expect(await store.deleteObjectVersions(bucket.id, [{ key: 'race/k', version: current.version }])).toHaveLength(1);
  });
});

describe('wrangler r2 bucket lifecycle against Ledge', () => {
  const wrangler = (args: string[]) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });

  it('adds, lists and removes rules', async () => {
    const add = await wrangler([
      'r2',
      'bucket',
      'lifecycle',
      'add',
      'wrangler-rules',
      'expire-logs',
      'logs/',
      '--expire-days',
      '30',
      '--force',
    ]);
    expect(add.code, `${add.stdout}${add.stderr}`).toBe(0);
    const abort = await wrangler([
      'r2',
      'bucket',
      'lifecycle',
      'add',
      'wrangler-rules',
      'abort-uploads',
      '--abort-multipart-days',
      '7',
      '--force',
    ]);
    expect(abort.code, `${abort.stdout}${abort.stderr}`).toBe(0);
    const stored = await ledge.server.platform.storage.lifecycle.get(ledge.accountId, 'wrangler-rules');
    expect(stored.map((r) => r.id)).toEqual(['expire-logs', 'abort-uploads']);
    expect(stored[0]!.deleteObjectsTransition?.condition).toEqual({ type: 'Age', maxAge: 30 * 86400 });
    expect(stored[0]!.conditions?.prefix).toBe('logs/');

    const list = await wrangler(['r2', 'bucket', 'lifecycle', 'list', 'wrangler-rules']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/expire-logs/);
    expect(list.stdout).toMatch(/logs\//);
    expect(list.stdout).toMatch(/Expire objects after 30 days/);
    expect(list.stdout).toMatch(/abort-uploads/);

    const remove = await wrangler(['r2', 'bucket', 'lifecycle', 'remove', 'wrangler-rules', '--name', 'expire-logs']);
    expect(remove.code, `${remove.stdout}${remove.stderr}`).toBe(0);
    const after = await ledge.server.platform.storage.lifecycle.get(ledge.accountId, 'wrangler-rules');
    expect(after.map((r) => r.id)).toEqual(['abort-uploads']);

    const missing = await wrangler(['r2', 'bucket', 'lifecycle', 'list', 'no-such-bucket']);
    expect(missing.code).not.toBe(0);
    expect(`${missing.stdout}${missing.stderr}`).toMatch(/10006|does not exist/);
  });
});

async function* oneChunk(text: string): AsyncGenerator<Uint8Array> {
  yield new TextEncoder().encode(text);
}

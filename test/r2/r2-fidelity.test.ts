import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { startMiniflare, type RunningMiniflare } from './miniflare-harness.ts';
import { startWorkerd, type RunningWorkerd } from './workerd-harness.ts';

/**
 * Issue 13 points 3 and 4: the same worker (fixtures/fidelity-worker.js) runs on real workerd against
 * Ledge and on Miniflare (R2's reference simulator, its own R2 implementation); where R2's documentation
 * is silent, Ledge must answer as Miniflare does, outcome for outcome, message for message.
 */
const WORKER = join(import.meta.dirname, 'fixtures/fidelity-worker.js');
let ledge: TestLedge;
let workerd: RunningWorkerd;
let miniflare: RunningMiniflare;

beforeAll(async () => {
  ledge = await startLedge();
  await ledge.server.platform.storage.buckets.create(ledge.accountId, { name: 'fidelity' });
  workerd = await startWorkerd(WORKER, ledge.server.platform.r2Backend.workerdService(ledge.accountId, 'fidelity'));
  miniflare = await startMiniflare(WORKER);
});

afterAll(async () => {
  await miniflare?.stop();
  await workerd?.stop();
  await ledge?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Outcomes = Record<string, any>;

async function onLedge(scenario: string): Promise<Outcomes> {
  const response = await fetch(`${workerd.url}/${scenario}`);
  expect(response.status, workerd.stderr()).toBe(200);
  const outcomes = (await response.json()) as Outcomes;
  expect(outcomes.crashed).toBeUndefined();
  return outcomes;
}

async function onMiniflare(scenario: string): Promise<Outcomes> {
  const response = await miniflare.fetch(scenario);
  expect(response.status).toBe(200);
  const outcomes = (await response.json()) as Outcomes;
  expect(outcomes.crashed).toBeUndefined();
  return outcomes;
}

async function both(scenario: string): Promise<{ ledge: Outcomes; miniflare: Outcomes }> {
  return { ledge: await onLedge(scenario), miniflare: await onMiniflare(scenario) };
}

describe('R2 fidelity: Ledge and Miniflare run the same worker', () => {
  it('stores, reads, lists and deletes the empty key', async () => {
    const r = await both('emptyKey');
    expect(r.ledge).toEqual(r.miniflare);
    expect(r.ledge.get).toEqual({ ok: 'x' });
    expect(r.ledge.list).toEqual({ ok: [''] });
  });

  it('reads any list cursor instead of refusing it', async () => {
    const r = await both('cursors');
    expect(r.ledge).toEqual(r.miniflare);
    expect(r.ledge.valid.ok.keys).toEqual(['c/b', 'c/c']);
    expect(r.ledge.base64.ok.keys).toEqual(['c/b', 'c/c']);
  });

  it('compares onlyIf dates strictly, truncating both sides with secondsGranularity', async () => {
    const r = await both('secondsGranularity');
    expect(r.ledge).toEqual(r.miniflare);
    expect(Object.values(r.ledge)).toContain(true);
    expect(Object.values(r.ledge)).toContain(false);
  });

  it('names the algorithm, the provided and the received digest when a checksum does not match', async () => {
    const r = await both('checksums');
    expect(r.ledge).toEqual(r.miniflare);
    expect(r.ledge.sha256.error).toMatch(
      /^put: The SHA-256 checksum you specified did not match what we received\.\nYou provided a SHA-256 checksum with value: (ab){32}\nActual SHA-256 was: [0-9a-f]{64} \(10037\)$/,
    );
    expect(r.ledge.stored).toBeNull();
  });

  it('handles stale etags, duplicates, empty and repeated completes, aborts and unknown uploads as R2', async () => {
    const r = await both('multipartSmall');
    // Each upload of a part gets a new etag, the same bytes included, as Miniflare's R2 tests model it.
    expect(r.ledge.sameBytesSameEtag).toBe(false);
    expect(r.ledge).toEqual(r.miniflare);
    expect(r.ledge.staleEtag.error).toMatch(/\(10025\)$/);
    expect(r.ledge.duplicate.error).toMatch(/\(10001\)$/);
    expect(r.ledge.completeAgain.error).toMatch(/\(10024\)$/);
    expect(r.ledge.completeEmpty.ok).toEqual({ key: 'mp/empty', size: 0, etag: 'd41d8cd98f00b204e9800998ecf8427e-0' });
    expect(r.ledge.abortAgain).toEqual({ ok: 'aborted' });
    expect(r.ledge.unknownAbort.error).toMatch(/\(10001\)$/);
  });

  it('checks part sizes in the order the parts are listed (10011), then equal sizes (10048)', async () => {
    const r = await both('multipartSizes');
    expect(r.ledge).toEqual(r.miniflare);
    expect(r.ledge.smallListedFirst.error).toMatch(/\(10011\)$/);
    expect(r.ledge.lastLarger.error).toBe(
      'completeMultipartUpload: There was a problem with the multipart upload. (10048)',
    );
    expect(r.ledge.size).toBe(5 * 1024 * 1024 + 100);
  });
});

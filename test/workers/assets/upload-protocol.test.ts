import { createHash } from 'node:crypto';
import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../../src/storage/index.ts';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { ManualClock } from '../../helpers/manual-clock.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, functionsPort, tenant } from '../helpers.ts';

/** A file as wrangler describes it: a 32-hex-digit hash (here of the bytes; Ledge does not recompute it). */
const file = (text: string) => ({
  text,
  hash: createHash('sha256').update(text).digest('hex').slice(0, 32),
  size: Buffer.byteLength(text),
});

async function startSession(
  ledge: TestLedge,
  script: string,
  manifest: Record<string, { hash: string; size: number }>,
) {
  return api(ledge, 'POST', `/accounts/${ledge.accountId}/workers/scripts/${script}/assets-upload-session`, {
    manifest,
  });
}

async function sendFiles(
  ledge: TestLedge,
  jwt: string,
  files: { hash: string; text: string }[],
  accountId = ledge.accountId,
) {
  const form = new FormData();
  for (const f of files)
    form.set(f.hash, new File([Buffer.from(f.text).toString('base64')], f.hash, { type: 'text/html' }));
  const response = await fetch(`${ledge.apiUrl}/accounts/${accountId}/workers/assets/upload?base64=true`, {
    method: 'POST',
    headers: { authorization: `Bearer ${jwt}` },
    body: form,
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      success: boolean;
      result: { jwt?: string };
      errors: { code: number; message: string }[];
    },
  };
}

/** Deploys an assets-only site whose one file is `f`, through the API as wrangler does; its completion token. */
async function deploySite(ledge: TestLedge, script: string, f: { hash: string; size: number; text: string }) {
  const session = await startSession(ledge, script, { '/index.html': { hash: f.hash, size: f.size } });
  expect(session.status).toBe(200);
  let jwt = session.body.result.jwt as string;
  if ((session.body.result.buckets as string[][]).length > 0) {
    const sent = await sendFiles(ledge, jwt, [f]);
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    jwt = sent.body.result.jwt!;
  }
  const form = new FormData();
  form.set('metadata', JSON.stringify({ assets: { jwt, config: {} }, compatibility_date: '2025-06-01' }));
  const response = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/${script}`, {
    method: 'PUT',
    headers: ledge.tokenHeaders,
    body: form,
  });
  return {
    status: response.status,
    body: (await response.json()) as { success: boolean; errors: { message: string }[] },
  };
}

describe('the assets upload protocol', () => {
  let ledge: TestLedge;
  let other: TestLedge;
  const clock = new ManualClock();

  beforeAll(async () => {
    ledge = await startLedge({ clock });
    other = await tenant(ledge, 'Other');
  });
  afterAll(async () => ledge?.close());

  it('asks for the files the account lacks, in buckets, and answers the completion token after the last one', async () => {
    const a = file('<h1>a</h1>');
    const b = file('<h1>b</h1>');
    const session = await startSession(ledge, 'proto', {
      '/a.html': { hash: a.hash, size: a.size },
      '/b.html': { hash: b.hash, size: b.size },
      '/copy-of-a.html': { hash: a.hash, size: a.size },
    });
    expect(session.status).toBe(200);
    expect((session.body.result.buckets as string[][]).flat().sort()).toEqual([a.hash, b.hash].sort());
    const jwt = session.body.result.jwt as string;
    const first = await sendFiles(ledge, jwt, [a]);
    expect([first.status, first.body.result]).toEqual([202, {}]);
    const last = await sendFiles(ledge, jwt, [b]);
    expect(last.status).toBe(201);
    expect(last.body.result.jwt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    // The same files again: nothing to send, the token is the completion token.
    const again = await startSession(ledge, 'proto', { '/x.html': { hash: a.hash, size: a.size } });
    expect(again.body.result.buckets).toEqual([]);
  });

  it('refuses bad input with 4xx and stores nothing', async () => {
    const a = file('<p>bad input</p>');
    const bad = await startSession(ledge, 'proto', { 'no-slash.html': { hash: a.hash, size: a.size } });
    expect(bad.status).toBe(400);
    expect((await startSession(ledge, 'proto', { '/../etc/passwd': { hash: a.hash, size: 1 } })).status).toBe(400);
    expect((await startSession(ledge, 'proto', { '/x': { hash: 'XYZ', size: 1 } })).status).toBe(400);
    const tooBig = await startSession(ledge, 'proto', { '/big.bin': { hash: a.hash, size: 25 * 1024 * 1024 + 1 } });
    expect([tooBig.status, JSON.stringify(tooBig.body.errors)]).toEqual([400, expect.stringContaining('25 MiB')]);

    const session = await startSession(ledge, 'proto', { '/p.html': { hash: a.hash, size: a.size } });
    const jwt = session.body.result.jwt as string;
    // Wrong size, a hash outside the manifest, a forged or missing token.
    const wrong = await sendFiles(ledge, jwt, [{ hash: a.hash, text: 'other bytes' }]);
    expect(wrong.status).toBe(400);
    expect((await sendFiles(ledge, jwt, [file('stranger')])).status).toBe(400);
    const forged = `${jwt.split('.').slice(0, 2).join('.')}.${'A'.repeat(43)}`;
    expect((await sendFiles(ledge, forged, [a])).status).toBe(401);
    expect((await sendFiles(ledge, 'not-a-jwt', [a])).status).toBe(401);
    // Nothing was stored: the file is still missing.
    expect(
      (await startSession(ledge, 'proto', { '/p.html': { hash: a.hash, size: a.size } })).body.result.buckets,
    ).toEqual([[a.hash]]);
    // A deploy with the upload token of a session whose file never arrived is refused.
    const form = new FormData();
    form.set('metadata', JSON.stringify({ assets: { jwt, config: {} }, compatibility_date: '2025-06-01' }));
    const deploy = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/proto`, {
      method: 'PUT',
      headers: ledge.tokenHeaders,
      body: form,
    });
    expect(deploy.status).toBe(400);
  });

  it('an upload token expires with its session', async () => {
    const a = file('<p>late</p>');
    const session = await startSession(ledge, 'proto', { '/late.html': { hash: a.hash, size: a.size } });
    await clock.advance(3601_000);
    const late = await sendFiles(ledge, session.body.result.jwt as string, [a]);
    expect([late.status, late.body.errors[0]?.message]).toEqual([401, expect.stringContaining('expired')]);
  });

  it("an account never reads another's files, whatever hash it names", async () => {
    const secret = file('<p>only for the first account</p>');
    expect((await deploySite(ledge, 'mine', secret)).status).toBe(200);
    // The other account names the same hash: it must send the bytes itself.
    const theirs = await startSession(other, 'theirs', { '/index.html': { hash: secret.hash, size: secret.size } });
    expect(theirs.body.result.buckets).toEqual([[secret.hash]]);
    // Its token does not work on the first account's path, nor the first account's on its own.
    const token = theirs.body.result.jwt as string;
    expect((await sendFiles(other, token, [secret], ledge.accountId)).status).toBe(400);
    const mine = await startSession(ledge, 'mine', { '/index.html': { hash: secret.hash, size: secret.size } });
    const completion = mine.body.result.jwt as string;
    const form = new FormData();
    form.set('metadata', JSON.stringify({ assets: { jwt: completion, config: {} }, compatibility_date: '2025-06-01' }));
    const stolen = await fetch(`${other.apiUrl}/accounts/${other.accountId}/workers/scripts/theirs`, {
      method: 'PUT',
      headers: other.tokenHeaders,
      body: form,
    });
    expect(stolen.status).toBe(400);
    expect((await api(other, 'GET', `/accounts/${other.accountId}/workers/scripts`)).body.result).toEqual([]);
  });

  it('serves an assets-only site, and frees its files once the script is gone (counted)', async () => {
    const page = file('<h1>collected</h1>');
    expect((await deploySite(ledge, 'gone', page)).status).toBe(200);
    expect((await enableWorkersDev(ledge, 'gone')).status).toBe(200);
    const host = `gone.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('<h1>collected</h1>');
    const assets = ledge.server.platform.functions.workers.assets!;
    const blobsBefore = countFiles(join(ledge.dataDir, 'assets'));

    expect((await api(ledge, 'DELETE', `/accounts/${ledge.accountId}/workers/scripts/gone`)).status).toBe(200);
    // Within the grace period an upload session may still count on it: kept.
    expect(await assets.collect()).toEqual({ files: 0, bytes: 0, orphans: 0 });
    await clock.advance(3 * 3600_000);
    const freed = await assets.collect();
    // The deleted site's file and the files of sessions never deployed go; the first account's live site stays.
    expect(freed.files).toBeGreaterThanOrEqual(1);
    expect(countFiles(join(ledge.dataDir, 'assets'))).toBe(blobsBefore - freed.files);
    const again = await startSession(ledge, 'gone', { '/index.html': { hash: page.hash, size: page.size } });
    expect(again.body.result.buckets).toEqual([[page.hash]]);
    const live = await startSession(ledge, 'mine', { '/index.html': file('<p>only for the first account</p>') });
    expect(live.body.result.buckets).toEqual([]);
  });

  it('removes blobs no file names (a crash between an upload and its rows) once they are old, and no others', async () => {
    const assets = ledge.server.platform.functions.workers.assets!;
    const store = new FsBlobStore(join(ledge.dataDir, 'assets'));
    const write = (text: string) =>
      store.write(
        (async function* () {
          yield Buffer.from(text);
        })(),
        { namespace: ledge.accountId },
      );
    const [old, young] = [await write('orphan from a crash'), await write('an upload still on its way')];
    // FsBlobStore's layout for an account's blob: accounts/<account>/<2 hex>/<id>.
    const pathOf = (blobId: string) => {
      const [account, id] = blobId.split('/') as [string, string];
      return join(ledge.dataDir, 'assets/accounts', account, id.slice(0, 2), id);
    };
    const age = (blobId: string, hours: number) => {
      const at = new Date(clock.now() - hours * 3600_000);
      utimesSync(pathOf(blobId), at, at);
    };
    age(old.blobId, 3);
    age(young.blobId, 1);
    const before = countFiles(join(ledge.dataDir, 'assets'));
    const collected = await assets.collect();
    expect(collected.orphans).toBe(1);
    expect(existsSync(pathOf(old.blobId))).toBe(false);
    expect(existsSync(pathOf(young.blobId))).toBe(true);
    expect(countFiles(join(ledge.dataDir, 'assets'))).toBe(before - 1);
    // The live site's file is named by a row: still served.
    const live = await startSession(ledge, 'mine', { '/index.html': file('<p>only for the first account</p>') });
    expect(live.body.result.buckets).toEqual([]);
  });
});

function countFiles(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter(
    (e) => e.isFile() && /^[0-9a-f]{32}$/.test(e.name),
  ).length;
}

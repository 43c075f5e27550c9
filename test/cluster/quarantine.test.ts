import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/index.ts';
import { SecretBox } from '../../src/shared/crypto.ts';
import { SqlWorkerStore } from '../../src/workers/index.ts';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';
import { call, type LedgeTarget } from '../notifications/api-helpers.ts';
import { storeBrokenVersion } from '../workers/helpers.ts';
import { callFunctionOn, uploadWorker } from './cluster-helpers.ts';
import { systemClock } from '../../src/shared/clock.ts';

/**
 * Several nodes on one PostgreSQL: a node never refuses to start because of one account's scripts. A deployed
 * version that cannot load (what a workerd upgrade could leave behind) is quarantined on the node that starts
 * with it, and the node serves the rest.
 */
describe('several nodes: start-up never depends on tenant code', () => {
  const nodes: SpawnedLedge[] = [];
  let dropDatabase: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop('SIGTERM').catch(() => undefined)));
    await dropDatabase?.();
  });

  it('starts a node whose database holds a script that cannot load, serving the others and 1101 for it', async () => {
    const database = await freshPostgresDatabase();
    dropDatabase = () => database.drop();
    const secretKey = randomBytes(32);
    const env = {
      LEDGE_DATABASE_URL: database.url,
      LEDGE_SECRET_KEY: secretKey.toString('base64'),
      LEDGE_FUNCTIONS_PROCESSES: '1',
      LEDGE_FUNCTIONS_START_TIMEOUT_MS: '3000',
    };
    const dirs = [tempDir('ledge-node1-'), tempDir('ledge-node2-')];
    nodes.push(await spawnLedge(dirs[0]!, [], { ...env, LEDGE_NODE_ID: 'node-1' }));
    nodes.push(await spawnLedge(dirs[1]!, [], { ...env, LEDGE_NODE_ID: 'node-2' }));
    const target = (node: SpawnedLedge): LedgeTarget => ({
      apiUrl: node.apiUrl,
      accountId: TEST_CREDENTIALS.accountId,
      tokenHeaders: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
    });
    const one = target(nodes[0]!);
    for (const name of ['steady', 'fragile']) {
      expect(await uploadWorker(one, name, `export default { fetch() { return new Response('${name} ok'); } };`)).toBe(
        200,
      );
      const routed = await call(one, 'POST', `/accounts/${one.accountId}/workers/scripts/${name}/subdomain`, {
        enabled: true,
      });
      expect(routed.status).toBe(200);
    }
    const subdomain = (
      (await call(one, 'GET', `/accounts/${one.accountId}/workers/subdomain`)).body.result as {
        subdomain: string;
      }
    ).subdomain;

    // The broken version goes into the shared database directly, then node 2 restarts on it.
    const db = openDatabase(database.url, '');
    try {
      await storeBrokenVersion(new SqlWorkerStore(db, new SecretBox(secretKey), systemClock), one.accountId, 'fragile');
    } finally {
      await db.close();
    }
    expect(await nodes[1]!.stop('SIGTERM')).toBe(0);
    nodes[1] = await spawnLedge(dirs[1]!, [], { ...env, LEDGE_NODE_ID: 'node-2' });
    const port = Number(nodes[1].info['functions_port']);
    expect(await callFunctionOn(port, `steady.${subdomain}.localhost`)).toEqual({ status: 200, body: 'steady ok' });
    expect(await callFunctionOn(port, `fragile.${subdomain}.localhost`)).toEqual({
      status: 503,
      body: 'error code: 1101',
    });
    const status = await call(target(nodes[1]), 'GET', `/accounts/${one.accountId}/workers/runtime/scripts`);
    expect(status.body.result).toContainEqual(
      expect.objectContaining({
        script: 'fragile',
        state: 'failed',
        failure: expect.objectContaining({ reason: expect.stringContaining('stored broken version') }),
      }),
    );
  });
});

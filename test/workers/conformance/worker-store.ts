import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkerStore } from '../../../src/workers/index.ts';
import type { DeploymentRecord, VersionRecord } from '../../../src/workers/types.ts';
import { newId } from '../../../src/shared/ids.ts';

export interface WorkerStoreFixture {
  store: WorkerStore;
  /** The same records through another database handle (a second node on PostgreSQL). */
  secondStore: WorkerStore;
  /** Two accounts that exist (scripts and subdomains belong to one). */
  accounts: [string, string];
  close(): Promise<void>;
}

const iso = () => new Date().toISOString();

export function upload(accountId: string, name: string, createdOn = iso()) {
  const version: Omit<VersionRecord, 'number'> = {
    id: newId(),
    account_id: accountId,
    script_name: name,
    main_module: 'index.js',
    modules: [{ name: 'index.js', type: 'esModule', content: 'ZXhwb3J0IGRlZmF1bHQge30=' }],
    bindings: [{ type: 'plain_text', name: 'GREETING', text: 'hi' } as VersionRecord['bindings'][number]],
    compatibility_date: '2025-01-01',
    compatibility_flags: ['nodejs_compat'],
    cpu_ms: 50,
    etag: newId(),
    source: 'api',
    author_email: 'a@example.com',
    created_on: createdOn,
    assets: null,
  };
  const script = {
    account_id: accountId,
    name,
    tag: newId(),
    last_deployed_from: 'api',
    created_on: createdOn,
    modified_on: createdOn,
  };
  return { script, version };
}

const deployment = (accountId: string, script: string, versionId: string, createdOn = iso()): DeploymentRecord => ({
  id: newId(),
  account_id: accountId,
  script_name: script,
  version_id: versionId,
  source: 'api',
  author_email: null,
  annotations: { 'workers/message': 'm' },
  created_on: createdOn,
});

/** The contract of every WorkerStore, with races between two handles (two nodes on PostgreSQL). */
export function workerStoreConformance(name: string, create: () => Promise<WorkerStoreFixture>): void {
  describe(`WorkerStore conformance: ${name}`, () => {
    let fixture: WorkerStoreFixture;
    let store: WorkerStore;
    let acct: string;
    beforeEach(async () => {
      fixture = await create();
      store = fixture.store;
      acct = fixture.accounts[0];
    });
    afterEach(async () => fixture.close());

    it('numbers versions per script, deploys one, and lists what is deployed with every field', async () => {
      const first = upload(acct, 'hello');
      const v1 = await store.saveVersion({ ...first, secrets: [] });
      const second = upload(acct, 'hello');
      const d = deployment(acct, 'hello', second.version.id);
      const v2 = await store.saveVersion({ ...second, secrets: [], deployment: d });
      expect([v1.number, v2.number]).toEqual([1, 2]);
      expect((await store.listVersions(acct, 'hello')).map((v) => v.number)).toEqual([2, 1]);
      expect(await store.getVersion(acct, 'hello', v1.id)).toEqual(v1);
      const script = (await store.getScript(acct, 'hello'))!;
      expect(script).toMatchObject({ current_deployment_id: d.id, workers_dev: false, settings: {} });
      expect(await store.getDeployment(d.id)).toEqual(d);
      expect(await store.listDeployed()).toEqual([{ script, version: v2 }]);
      expect((await store.listScripts(acct)).map((s) => s.name)).toEqual(['hello']);
      expect(await store.listScripts(fixture.accounts[1])).toEqual([]);
    });

    it('lists deployments newest first, also within one millisecond, and keeps the current one', async () => {
      const { script, version } = upload(acct, 'seq');
      await store.saveVersion({ script, version, secrets: [] });
      const at = iso();
      const made = [];
      for (let i = 0; i < 4; i++) {
        const d = deployment(acct, 'seq', version.id, at);
        await store.addDeployment(d);
        made.push(d.id);
      }
      expect((await store.listDeployments(acct, 'seq')).map((d) => d.id)).toEqual([...made].reverse());
      expect(await store.deleteDeployment(acct, 'seq', made[3]!)).toBe(false);
      expect(await store.deleteDeployment(acct, 'seq', made[0]!)).toBe(true);
      expect(await store.deleteDeployment(acct, 'seq', made[0]!)).toBe(false);
      expect(await store.listDeployments(acct, 'seq')).toHaveLength(3);
    });

    it('keeps flags and settings, and deletes a script with everything it has', async () => {
      const { script, version } = upload(acct, 'flags');
      await store.saveVersion({ script, version, secrets: [{ name: 'S', text: 'v' }] });
      await store.setWorkersDev(acct, 'flags', true, true);
      await store.updateSettings(acct, 'flags', { logpush: true, tags: ['a'] });
      expect(await store.getScript(acct, 'flags')).toMatchObject({
        workers_dev: true,
        previews_enabled: true,
        settings: { logpush: true, tags: ['a'] },
      });
      expect(await store.deleteScript(acct, 'flags')).toBe(true);
      expect(await store.deleteScript(acct, 'flags')).toBe(false);
      expect(await store.listVersions(acct, 'flags')).toEqual([]);
      expect(await store.listSecretNames(acct, 'flags')).toEqual([]);
    });

    it('seals secrets, replaces and removes them, also several at once', async () => {
      const { script, version } = upload(acct, 'sec');
      await store.saveVersion({ script, version, secrets: [{ name: 'B', text: 'one' }] });
      await store.putSecret(acct, 'sec', 'A', 'two');
      await store.putSecret(acct, 'sec', 'B', 'three');
      expect(await store.getSecrets(acct, 'sec')).toEqual([
        { name: 'A', type: 'secret_text', text: 'two' },
        { name: 'B', type: 'secret_text', text: 'three' },
      ]);
      await store.applySecrets(acct, 'sec', [{ name: 'C', text: 'four' }], ['A']);
      expect(await store.listSecretNames(acct, 'sec')).toEqual(['B', 'C']);
      expect(await store.deleteSecret(acct, 'sec', 'B')).toBe(true);
      expect(await store.deleteSecret(acct, 'sec', 'B')).toBe(false);
      const next = upload(acct, 'sec');
      await store.saveVersion({ ...next, secrets: [{ name: 'D', text: 'five' }], removeSecrets: ['C'] });
      expect(await store.listSecretNames(acct, 'sec')).toEqual(['D']);
    });

    it('gives a subdomain to one account, releases it, and remembers the release', async () => {
      const [mine, theirs] = fixture.accounts;
      expect(await store.setSubdomain(mine, 'acme')).toBe(true);
      expect(await store.setSubdomain(theirs, 'acme')).toBe(false);
      expect(await store.subdomainOwner('acme')).toBe(mine);
      expect(await store.getSubdomain(theirs)).toBeUndefined();
      expect(await store.releaseSubdomain(mine)).toBe(true);
      expect(await store.releaseSubdomain(mine)).toBe(false);
      expect(await store.isSubdomainReleased(mine)).toBe(true);
      expect(await store.getSubdomain(mine)).toBeUndefined();
      expect(await store.setSubdomain(theirs, 'acme')).toBe(true);
      expect(await store.setSubdomain(mine, 'other')).toBe(true);
      expect(await store.isSubdomainReleased(mine)).toBe(false);
    });

    it('numbers concurrent uploads of one script 1..n without a clash', async () => {
      const stores = [store, fixture.secondStore];
      const saved = await Promise.all(
        Array.from({ length: 6 }, (_, i) => stores[i % 2]!.saveVersion({ ...upload(acct, 'busy'), secrets: [] })),
      );
      expect(saved.map((v) => v.number).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('lets one of two accounts claiming one subdomain at once have it', async () => {
      for (let round = 0; round < 6; round++) {
        const results = await Promise.all([
          store.setSubdomain(fixture.accounts[0], `race-${round}`),
          fixture.secondStore.setSubdomain(fixture.accounts[1], `race-${round}`),
        ]);
        expect(results.sort()).toEqual([false, true]);
      }
    });
  });
}

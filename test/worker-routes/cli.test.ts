import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, type TestLedge } from '../helpers/ledge.ts';
import { api, uploadScript } from '../workers/helpers.ts';

describe('ledge routes', () => {
  let ledge: TestLedge;
  beforeAll(async () => {
    ledge = await startLedge();
    const zone = await api(ledge, 'POST', '/zones', { name: 'cli.example', account: { id: ledge.accountId } });
    for (const name of ['one', 'two']) expect((await uploadScript(ledge, name)).status).toBe(200);
    const routes = `/zones/${zone.body.result.id}/workers/routes`;
    expect((await api(ledge, 'POST', routes, { pattern: 'cli.example/api/*', script: 'one' })).status).toBe(200);
    expect((await api(ledge, 'POST', routes, { pattern: 'cli.example/api/skip' })).status).toBe(200);
    const domains = `/accounts/${ledge.accountId}/workers/domains`;
    expect((await api(ledge, 'PUT', domains, { hostname: 'www.cli.example', service: 'two' })).status).toBe(200);
  });
  afterAll(async () => ledge?.close());

  it("lists the account's routes and Custom Domains, all or one script's", async () => {
    const all = await runCli(['routes'], { env: cliEnv(ledge) });
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/cli\.example\/api\/\*\s+one\s+route\s+cli\.example/);
    expect(all.stdout).toMatch(/cli\.example\/api\/skip\s+\(none\)\s+route/);
    expect(all.stdout).toMatch(/www\.cli\.example\s+two\s+custom domain\s+cli\.example/);

    const json = await runCli(['routes', '--script', 'two', '--zone', 'cli.example', '--json'], { env: cliEnv(ledge) });
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as { routes: unknown[]; domains: { hostname: string }[] };
    expect(parsed.routes).toEqual([]);
    expect(parsed.domains.map((d) => d.hostname)).toEqual(['www.cli.example']);
  });
});

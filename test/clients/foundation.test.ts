import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';

let ledge: TestLedge;
const extraAccounts: string[] = [];

beforeAll(async () => {
  ledge = await startLedge();
  const accounts = ledge.server.platform.accounts;
  const owner = (await accounts.getUserByEmail(ledge.email))!;
  // 45 more accounts: with the default page size of 20 the list spans three pages.
  for (let i = 0; i < 45; i++) {
    const account = await accounts.createAccount({ name: `Paged Account ${String(i).padStart(2, '0')}` });
    await accounts.addMember(account.id, owner.id);
    extraAccounts.push(account.id);
  }
});
afterAll(() => ledge.close());

describe('official cloudflare SDK', () => {
  it('accounts.list() auto-pages through every account and ends', async () => {
    const client = new Cloudflare({ baseURL: ledge.apiUrl, apiToken: ledge.apiToken, maxRetries: 0 });
    const seen: string[] = [];
    for await (const account of client.accounts.list()) seen.push(account.id);
    expect(seen).toHaveLength(46);
    expect(new Set(seen).size).toBe(46);
    expect(seen).toEqual(expect.arrayContaining([ledge.accountId, ...extraAccounts]));
  });

  it('works with the global key too, and surfaces v4 errors', async () => {
    const client = new Cloudflare({
      baseURL: ledge.apiUrl,
      apiEmail: ledge.email,
      apiKey: ledge.apiKey,
      maxRetries: 0,
    });
    const account = await client.accounts.get({ account_id: ledge.accountId });
    expect(account.id).toBe(ledge.accountId);
    const bad = new Cloudflare({ baseURL: ledge.apiUrl, apiEmail: ledge.email, apiKey: 'ffff', maxRetries: 0 });
    await expect(bad.accounts.get({ account_id: ledge.accountId })).rejects.toMatchObject({ status: 403 });
  });
});

describe('real wrangler', () => {
  it('wrangler whoami with an API token', async () => {
    const { code, stdout, stderr } = await runWrangler(['whoami'], {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken },
    });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(ledge.email);
    expect(stdout).toContain(ledge.accountId);
    expect(stdout).toContain(extraAccounts[44]);
  });

  it('wrangler whoami with the global API key', async () => {
    const { code, stdout, stderr } = await runWrangler(['whoami'], {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_KEY: ledge.apiKey, CLOUDFLARE_EMAIL: ledge.email },
    });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(ledge.accountId);
    expect(stdout).toMatch(/Global API Key/i);
  });

  it('wrangler whoami reports a bad token as an authentication failure', async () => {
    const { code, stdout, stderr } = await runWrangler(['whoami'], {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: 'not-a-valid-token' },
    });
    expect(`${stdout}${stderr}`).not.toContain(ledge.accountId);
    expect(code !== 0 || /not authenticated|Invalid API Token|1000/i.test(stdout + stderr)).toBe(true);
  });
});

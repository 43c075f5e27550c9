import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { browserFixture, origin, readOnlyToken } from './helpers.ts';
import { screenshot } from './shots.ts';

let ledge: TestLedge;
const { signedInPage } = browserFixture(async () => (ledge = await startLedge()));

/** Whether a token value is accepted by the API right now. */
const works = async (value: string) =>
  (
    await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets`, {
      headers: { authorization: `Bearer ${value}` },
    })
  ).status;

const MARKUP = '<img src=x onerror=alert(1)>';

describe('dashboard in Chromium: API tokens and members', () => {
  it('creates a token whose value is shown once, rolls it and deletes it, each asked first; a markup name is text', async () => {
    const { page, errors, dialogs } = await signedInPage();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Tokens' }).click();
    await page.getByRole('heading', { name: 'API Tokens' }).waitFor();
    await page
      .getByRole('table', { name: /API tokens/ })
      .getByText('bootstrap token (this session)')
      .waitFor();

    await page.getByLabel('Token name').fill(MARKUP);
    await page.getByLabel('Access').selectOption({ label: 'Read only' });
    await page.getByRole('button', { name: 'Create token' }).click();
    const value = await page.getByLabel('Token value').inputValue();
    expect(value.length).toBeGreaterThan(20);
    expect(await works(value)).toBe(200);
    // The S3 key pair shown with it works on the S3 API, at the endpoint the page names.
    const endpoint = `http://127.0.0.1:${ledge.server.platform.s3Api.port}`;
    await page.getByText(`S3 endpoint: ${endpoint.replace('127.0.0.1', new URL(origin(ledge)).hostname)}.`).waitFor();
    const s3 = new S3Client({
      endpoint,
      region: 'auto',
      forcePathStyle: true,
      credentials: {
        accessKeyId: await page.getByLabel('S3 Access Key ID').inputValue(),
        secretAccessKey: await page.getByLabel('S3 Secret Access Key').inputValue(),
      },
    });
    await expect(s3.send(new ListBucketsCommand({}))).resolves.toMatchObject({ $metadata: { httpStatusCode: 200 } });
    s3.destroy();
    const write = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'nope' }),
    });
    expect(write.status).toBe(403);
    const row = page.getByRole('row').filter({ hasText: MARKUP });
    await row.getByText('Read only').waitFor();
    expect(await page.locator('main img').count()).toBe(0);

    // Shown once: the page comes back without it.
    await page.reload();
    await row.waitFor();
    expect(await page.getByLabel('Token value').count()).toBe(0);
    expect(await page.content()).not.toContain(value);
    // The picture for the docs shows no value, not even a test server's.
    await screenshot(page, 'tokens');

    await row.getByRole('button', { name: `Roll ${MARKUP}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect(await works(value)).toBe(200);
    await row.getByRole('button', { name: `Roll ${MARKUP}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Roll' }).click();
    const rolled = page.getByLabel('Token value');
    await rolled.waitFor();
    const next = await rolled.inputValue();
    expect(next).not.toBe(value);
    expect(await works(value)).toBe(401);
    expect(await works(next)).toBe(200);

    await row.getByRole('button', { name: `Delete ${MARKUP}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete token' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await works(next)).toBe(401);
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  it('invites a member, changes their role and removes them, with confirmation', async () => {
    const { page, errors } = await signedInPage();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members', exact: true }).waitFor();
    await page.getByLabel('Email').fill('teammate@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption({ label: 'Member' });
    await page.getByRole('button', { name: 'Invite member' }).click();
    const row = page.getByRole('row').filter({ hasText: 'teammate@example.com' });
    await row.getByText('pending').waitFor();
    const members = async () =>
      (
        (await (
          await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/members`, { headers: ledge.tokenHeaders })
        ).json()) as { result: { email: string; roles: { name: string }[] }[] }
      ).result.find((m) => m.email === 'teammate@example.com');
    expect((await members())?.roles.map((r) => r.name)).toEqual(['Member']);

    await page.getByRole('combobox', { name: 'Role of teammate@example.com' }).selectOption({ label: 'Administrator' });
    await row.getByRole('button', { name: 'Save role of teammate@example.com' }).click();
    await page.getByText('teammate@example.com is now Administrator.').waitFor();
    expect((await members())?.roles.map((r) => r.name)).toEqual(['Administrator']);
    await screenshot(page, 'members');

    await row.getByRole('button', { name: 'Remove teammate@example.com' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove member' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await members()).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('a read-only token sees tokens and members, and every control that changes them is disabled', async () => {
    const { page, errors } = await signedInPage(await readOnlyToken(ledge));
    await page.goto(`${origin(ledge)}/#/tokens`);
    await page
      .getByRole('table', { name: /API tokens/ })
      .getByText('viewer (this session)')
      .waitFor();
    await expect(page.getByRole('button', { name: 'Create token' }).isDisabled()).resolves.toBe(true);
    for (const button of await page.getByRole('button', { name: /^(Roll|Delete) / }).all())
      expect(await button.isDisabled()).toBe(true);
    await page.goto(`${origin(ledge)}/#/members`);
    await page
      .getByRole('table', { name: /Members of this account/ })
      .locator('tbody tr')
      .first()
      .waitFor();
    await expect(page.getByRole('button', { name: 'Invite member' }).isDisabled()).resolves.toBe(true);
    for (const control of await page.getByRole('button', { name: /^(Save role|Remove) / }).all())
      expect(await control.isDisabled()).toBe(true);
    for (const choice of await page.getByLabel(/^Role of /).all()) expect(await choice.isDisabled()).toBe(true);
    expect(errors).toEqual([]);
  });
});

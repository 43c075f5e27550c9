import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage } from '../../helpers/browser.ts';
import { fromTemplate } from '../../helpers/c3-template.ts';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { runWrangler } from '../../helpers/wrangler.ts';
import { accountSubdomain, callFunction, functionsPort } from '../helpers.ts';
import { FIRST_MIGRATION, OBJECTS_WORKER, routeObjects, uploadObjects } from './fixture.ts';

/** A chat page: each message sent on its WebSocket comes back from the room to every page in it. */
const CHAT_PAGE = `<!DOCTYPE html><html lang="en"><head><title>Chat</title></head><body>
<ul id="log"></ul><form id="form"><input id="text" aria-label="message"><button>Send</button></form>
<script>
const socket = new WebSocket('ws://' + location.host + '/room/chat/ws');
socket.onopen = () => { document.body.dataset.ready = 'yes'; };
socket.onmessage = (event) => {
  const item = document.createElement('li');
  item.textContent = event.data;
  document.getElementById('log').append(item);
};
document.getElementById('form').onsubmit = (event) => {
  event.preventDefault();
  socket.send(document.getElementById('text').value);
};
</script></body></html>`;

const CHAT_WORKER = OBJECTS_WORKER.replace(
  "const [, kind, name, action] = url.pathname.split('/');",
  `if (url.pathname === '/') return new Response(${JSON.stringify(CHAT_PAGE)}, { headers: { 'content-type': 'text/html' } });
    const [, kind, name, action] = url.pathname.split('/');`,
);

/** create-cloudflare's Durable Object starters deployed unchanged by the real wrangler, and a chat in Chromium. */
describe("create-cloudflare's Durable Object templates, and a WebSocket chat in Chromium", () => {
  let ledge: TestLedge;
  let browser: Browser;
  const deploy = async (project: string) => {
    const result = await runWrangler(['deploy'], {
      apiUrl: ledge.apiUrl,
      cwd: project,
      timeoutMs: 120_000,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
  };
  const host = async (script: string) => `${script}.${await accountSubdomain(ledge)}.localhost`;

  beforeAll(async () => {
    ledge = await startLedge();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await ledge?.close();
  });

  it('hello-world-durable-object: the worker greets through the object RPC method', async () => {
    await deploy(fromTemplate('hello-world-durable-object/js', 'hello-do'));
    const answer = await callFunction(functionsPort(ledge), await host('hello-do'), '/');
    expect([answer.status, answer.text]).toEqual([200, 'Hello, world!']);
  });

  it('hello-world-durable-object-with-assets: the page from public/ shows what the object says', async () => {
    await deploy(fromTemplate('hello-world-durable-object-with-assets/js', 'hello-do-assets'));
    const { page, context, errors } = await openPage(browser);
    try {
      await page.goto(`http://${await host('hello-do-assets')}:${functionsPort(ledge)}/`);
      await expect.poll(() => page.textContent('#heading'), { timeout: 30_000 }).toBe('Hello, world!');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('two Chromium pages chat through one hibernatable object', async () => {
    const uploaded = await uploadObjects(ledge, 'chat', { migrations: FIRST_MIGRATION }, CHAT_WORKER);
    expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
    const { port, host: chatHost } = await routeObjects(ledge, 'chat');
    const alice = await openPage(browser);
    const bob = await openPage(browser);
    try {
      for (const { page } of [alice, bob]) {
        await page.goto(`http://${chatHost}:${port}/`);
        await expect.poll(() => page.getAttribute('body', 'data-ready'), { timeout: 30_000 }).toBe('yes');
      }
      await alice.page.fill('#text', 'hello from alice');
      await alice.page.click('button');
      await bob.page.fill('#text', 'hi alice');
      await bob.page.click('button');
      for (const { page } of [alice, bob]) {
        await expect
          .poll(() => page.locator('#log li').allTextContents(), { timeout: 30_000 })
          .toEqual(['hello from alice', 'hi alice']);
      }
      expect([...alice.errors, ...bob.errors]).toEqual([]);
    } finally {
      await alice.context.close();
      await bob.context.close();
    }
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { uploadScript } from './helpers.ts';
import { startLedgeTail, startWranglerTail, waitForSessions, type RunningTail } from './tail-helpers.ts';

const WORKER = `export default { fetch() { return new Response('ok'); } };`;
const EDIT = 'c8fed203ed3043cba015a93ad1616f1f';
const MEMBER_ROLE = 'e58cefd75d7adae0b761796c28815e5c';
/** Generous: the grant is re-checked at once on this node, and every second on any. */
const ENDS_WITHIN = { timeoutMs: 20_000 };

/**
 * Ending access ends every stream: a deleted or rolled token, a removed member and a signed-out dashboard session
 * close their open `wrangler tail`, `ledge tail`, NDJSON tail and dashboard live stream.
 */
describe('streams end with the access that opened them', () => {
  let ledge: TestLedge;
  const running: RunningTail[] = [];
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${ledge.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as { success: boolean; result: never };
  };
  const newToken = async () => {
    const created = await call(ledge.apiToken, 'POST', '/user/tokens', {
      name: 'streams',
      policies: [
        {
          effect: 'allow',
          permission_groups: [{ id: EDIT }],
          resources: { [`com.cloudflare.api.account.${ledge.accountId}`]: '*' },
        },
      ],
    });
    return created.result as { id: string; value: string };
  };
  const exited = (t: RunningTail) =>
    waitFor(() => t.child.exitCode !== null || t.child.signalCode !== null, 'the tail client to exit', ENDS_WITHIN);
  /** Reads a streamed body to its end; resolves with what it held (a stream cut short by the server ends too). */
  const readToEnd = async (response: Response) => {
    const reader = response.body!.getReader();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return text;
      text += new TextDecoder().decode(value);
    }
  };

  beforeAll(async () => {
    ledge = await startLedge();
    expect((await uploadScript(ledge, 'watched', { modules: { 'index.js': WORKER } })).status).toBe(200);
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((t) => t.stop()));
  }, 30_000);
  afterAll(async () => ledge?.close(), 150_000);

  it('a deleted token ends its wrangler tail; a rolled one ends its ledge tail', async () => {
    const deleted = await newToken();
    const wrangler = startWranglerTail(ledge, ['watched', '--format', 'json'], deleted.value);
    running.push(wrangler);
    await waitForSessions(ledge, 1, 45_000, [wrangler]);
    expect((await call(ledge.apiToken, 'DELETE', `/user/tokens/${deleted.id}`)).success).toBe(true);
    await exited(wrangler);
    await waitFor(() => ledge.server.platform.functions.tails.size === 0, 'no tail session left', ENDS_WITHIN);

    const rolled = await newToken();
    const cli = startLedgeTail(ledge, ['watched'], rolled.value);
    running.push(cli);
    await waitForSessions(ledge, 1, 45_000, [cli]);
    expect((await call(ledge.apiToken, 'PUT', `/user/tokens/${rolled.id}/value`)).success).toBe(true);
    await exited(cli);
    expect(ledge.server.platform.functions.tails.size).toBe(0);
  });

  it("a removed member's ledge tail ends", async () => {
    const accounts = ledge.server.platform.accounts;
    const { user } = await accounts.createUser({ email: 'leaving@example.com' });
    const { value } = await accounts.createToken({ userId: user.id, name: 'member' });
    const invited = await call(ledge.apiToken, 'POST', `/accounts/${ledge.accountId}/members`, {
      email: 'leaving@example.com',
      roles: [MEMBER_ROLE],
    });
    const memberId = (invited.result as { id: string }).id;
    expect((await call(value, 'PATCH', `/user/invites/${memberId}`, { status: 'accepted' })).success).toBe(true);
    const cli = startLedgeTail(ledge, ['watched'], value);
    running.push(cli);
    await waitForSessions(ledge, 1, 45_000, [cli]);
    expect((await call(ledge.apiToken, 'DELETE', `/accounts/${ledge.accountId}/members/${memberId}`)).success).toBe(
      true,
    );
    await exited(cli);
    expect(ledge.server.platform.functions.tails.size).toBe(0);
  });

  it('the NDJSON tail of a deleted token ends, also when it was deleted behind this node (the periodic re-check)', async () => {
    const path = `${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/watched/tail?history=0`;
    const viaApi = await newToken();
    const first = await fetch(path, { headers: { authorization: `Bearer ${viaApi.value}` } });
    expect(first.status).toBe(200);
    const firstEnded = readToEnd(first);
    await call(ledge.apiToken, 'DELETE', `/user/tokens/${viaApi.id}`);
    await firstEnded;

    // Another node (or `ledge admin`) deleting it tells this process nothing: the re-check finds it gone.
    const behind = await newToken();
    const second = await fetch(path, { headers: { authorization: `Bearer ${behind.value}` } });
    expect(second.status).toBe(200);
    const secondEnded = readToEnd(second);
    await ledge.server.platform.db.run('DELETE FROM api_tokens WHERE id = ?', [behind.id]);
    await secondEnded;
  });

  it('the dashboard live stream ends on sign-out, and when its token is deleted', async () => {
    const signIn = async (token: string) => {
      const response = await fetch(`http://127.0.0.1:${ledge.port}/dashboard/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_token: token }),
      });
      const cookie = response.headers.get('set-cookie')!.split(';')[0]!;
      const { result } = (await response.json()) as { result: { csrf_token: string } };
      return { cookie, csrf: result.csrf_token };
    };
    const live = async (cookie: string) => {
      const response = await fetch(`http://127.0.0.1:${ledge.port}/dashboard/events`, { headers: { cookie } });
      expect(response.status).toBe(200);
      return readToEnd(response);
    };

    const session = await signIn(ledge.apiToken);
    const signedOut = live(session.cookie);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const out = await fetch(`http://127.0.0.1:${ledge.port}/dashboard/session`, {
      method: 'DELETE',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
    });
    expect(out.status).toBe(200);
    expect(await signedOut).toContain('retry:');

    const token = await newToken();
    const tokenSession = await signIn(token.value);
    const revoked = live(tokenSession.cookie);
    await call(ledge.apiToken, 'DELETE', `/user/tokens/${token.id}`);
    await revoked;
  });
});

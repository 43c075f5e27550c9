import { randomUUID } from 'node:crypto';
import { request as httpRequest, type Agent } from 'node:http';
import type { Socket } from 'node:net';
import { expect } from 'vitest';
import type { TestLedge } from '../helpers/ledge.ts';
import type { WorkerStore } from '../../src/workers/store.ts';

import type { Envelope } from '../helpers/envelope.ts';

export type { Envelope };

export interface UploadOptions {
  modules?: Record<string, string>;
  mainModule?: string;
  metadata?: Record<string, unknown>;
  query?: string;
  method?: 'PUT' | 'POST';
  path?: string;
}

/** Uploads a script the way wrangler does: multipart with a `metadata` part and one part per module. */
export async function uploadScript(ledge: TestLedge, name: string, options: UploadOptions = {}) {
  const modules = options.modules ?? { 'index.js': 'export default { fetch() { return new Response("hi"); } };' };
  const mainModule = options.mainModule ?? Object.keys(modules)[0]!;
  const form = new FormData();
  form.set(
    'metadata',
    JSON.stringify({ main_module: mainModule, bindings: [], compatibility_date: '2025-01-01', ...options.metadata }),
  );
  for (const [moduleName, source] of Object.entries(modules)) {
    form.set(moduleName, new File([source], moduleName, { type: 'application/javascript+module' }));
  }
  const path = options.path ?? `/accounts/${ledge.accountId}/workers/scripts/${name}${options.query ?? ''}`;
  const response = await fetch(`${ledge.apiUrl}${path}`, {
    method: options.method ?? 'PUT',
    headers: ledge.tokenHeaders,
    body: form,
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

export async function api(ledge: TestLedge, method: string, path: string, body?: unknown) {
  const response = await fetch(`${ledge.apiUrl}${path}`, {
    method,
    headers: { ...ledge.tokenHeaders, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

/** Enables workers.dev-style routing for a script (what wrangler does after a deploy). */
export async function enableWorkersDev(ledge: TestLedge, name: string) {
  return api(ledge, 'POST', `/accounts/${ledge.accountId}/workers/scripts/${name}/subdomain`, { enabled: true });
}

export function functionsPort(ledge: TestLedge): number {
  return ledge.server.platform.functions.runtime.port!;
}

export async function accountSubdomain(ledge: TestLedge): Promise<string> {
  return (await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/subdomain`)).body.result.subdomain as string;
}

/** Sockets that have carried at least one complete response (keep-alive reuse, see callFunction). */
const servedSockets = new WeakSet<Socket>();

/**
 * Creates a bucket and deploys `source` as a script bound to it as `BUCKET`, on workers.dev; answers the
 * function's host (the isolate-cache suites' probe).
 */
export async function deployBucketProbe(ledge: TestLedge, bucket: string, script: string, source: string) {
  expect((await api(ledge, 'POST', `/accounts/${ledge.accountId}/r2/buckets`, { name: bucket })).status).toBe(200);
  const upload = await uploadScript(ledge, script, {
    modules: { 'index.js': source },
    metadata: { bindings: [{ type: 'r2_bucket', name: 'BUCKET', bucket_name: bucket }] },
  });
  expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
  expect((await enableWorkersDev(ledge, script)).status).toBe(200);
  return `${script}.${await accountSubdomain(ledge)}.localhost`;
}

export interface FunctionResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

/**
 * Calls a deployed function on 127.0.0.1 with the given Host, the way `curl http://<host>:<port>/...`
 * does (node:http, so the Host header is sent as given and bodies have a Content-Length).
 */
export function callFunction(
  port: number,
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer; agent?: Agent } = {},
): Promise<FunctionResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: init.method ?? 'GET',
        headers: { host: `${host}:${port}`, ...init.headers },
        agent: init.agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        const socket = res.socket;
        res.on('end', () => {
          if (socket) servedSockets.add(socket);
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    // A request that fails on a reused keep-alive socket before any answer is one the client may retry
    // (RFC 9112 section 9.3.1; Node documents `reusedSocket` for this): tell callers which case it was.
    // Node leaves `reusedSocket` false when a queued request gets a socket freed by another, so sockets
    // that already carried a response are tracked here too.
    req.on('error', (error) =>
      reject(
        Object.assign(error, {
          reusedSocket: req.reusedSocket || (req.socket !== null && servedSockets.has(req.socket)),
        }),
      ),
    );
    req.end(init.body);
  });
}

/** Another tenant: an account with its own user and account-scoped token, acting through the API. */
export async function tenant(ledge: TestLedge, name: string): Promise<TestLedge> {
  const accounts = ledge.server.platform.accounts;
  const account = await accounts.createAccount({ name });
  const { user } = await accounts.createUser({ email: `${name.toLowerCase()}@example.com` });
  await accounts.addMember(account.id, user.id);
  const { value } = await accounts.createToken({ userId: user.id, name, accountId: account.id });
  return { ...ledge, accountId: account.id, tokenHeaders: { authorization: `Bearer ${value}` } };
}

/**
 * Deploys, through the store, a version of `script` whose top-level code throws: what a workerd upgrade or an
 * older Ledge whose check let it through could leave deployed (the API's own deploys never store one).
 */
export async function storeBrokenVersion(store: WorkerStore, accountId: string, script: string): Promise<void> {
  const existing = (await store.getScript(accountId, script))!;
  const deployment = (await store.getDeployment(existing.current_deployment_id!))!;
  const current = (await store.getVersion(accountId, script, deployment.version_id))!;
  const source = `throw new Error('stored broken version of ${script}');\nexport default {};`;
  const id = randomUUID();
  const now = new Date().toISOString();
  await store.saveVersion({
    script: existing,
    version: {
      ...current,
      id,
      modules: [{ ...current.modules[0]!, content: Buffer.from(source).toString('base64') }],
      created_on: now,
    },
    secrets: [],
    deployment: {
      id: randomUUID(),
      account_id: accountId,
      script_name: script,
      version_id: id,
      source: 'api',
      author_email: 'test@example.com',
      annotations: {},
      created_on: now,
    },
  });
}

import { lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { serviceSocketPath } from '../../src/workerd/service-sockets.ts';
import { waitFor } from '../helpers/wait.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, api, callFunction, functionsPort, tenant } from './helpers.ts';

/** A Worker others bind to: fetch and RPC on its default export, a named entrypoint, and ways to crash. */
const BACKEND = (greeting: string) => `import { WorkerEntrypoint } from 'cloudflare:workers';
export default class extends WorkerEntrypoint {
  fetch(request) { return new Response('${greeting} ' + request.method + ' ' + new URL(request.url).pathname); }
  add(a, b) { return { sum: a + b, at: new Date(0) }; }
}
export class Admin extends WorkerEntrypoint {
  greet(name) { return ['${greeting}', name, new Map([['k', 1]]).get('k')]; }
  explode() { const hoard = []; for (;;) hoard.push(new Array(1e6).fill(hoard.length)); }
}
`;

/** The caller: each path exercises one way through its bindings and says what came back. */
const FRONTEND = `export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    try {
      if (path === '/fetch') return new Response(await (await env.BACKEND.fetch('http://anything/hello', { method: 'POST' })).text());
      if (path === '/rpc') return Response.json(await env.BACKEND.add(2, 3));
      if (path === '/admin') return Response.json(await env.ADMIN.greet('ann'));
      if (path === '/explode') return Response.json(await env.ADMIN.explode());
      if (path === '/bindings') return Response.json(Object.keys(env).sort());
      return new Response('frontend alive');
    } catch (error) {
      return new Response('binding failed: ' + error.message, { status: 502 });
    }
  },
};
`;

interface Project {
  name: string;
  source: string;
  toml?: string;
}

function project({ name, source, toml = '' }: Project): string {
  const dir = tempDir('ledge-services-');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src/index.js'), source);
  writeFileSync(
    join(dir, 'wrangler.toml'),
    `name = "${name}"\nmain = "src/index.js"\ncompatibility_date = "2025-01-01"\n${toml}\n`,
  );
  return dir;
}

async function deploy(ledge: TestLedge, spec: Project, token = ledge.apiToken, accountId = ledge.accountId) {
  return runWrangler(['deploy'], {
    apiUrl: ledge.apiUrl,
    cwd: project(spec),
    env: { CLOUDFLARE_API_TOKEN: token, CLOUDFLARE_ACCOUNT_ID: accountId },
    timeoutMs: 90_000,
  });
}

/** `[[services]]` between scripts of one account, with the real wrangler 4, each script in its own process. */
describe('service bindings across processes', () => {
  let ledge: TestLedge;
  let host: (script: string) => string;
  const call = (script: string, path: string) => callFunction(functionsPort(ledge), host(script), path);

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    const subdomain = await accountSubdomain(ledge);
    host = (script) => `${script}.${subdomain}.localhost`;
    const backend = await deploy(ledge, { name: 'backend', source: BACKEND('v1'), toml: 'workers_dev = false' });
    expect(backend.code, backend.stderr + backend.stdout).toBe(0);
    const frontend = await deploy(ledge, {
      name: 'frontend',
      source: FRONTEND,
      toml: `workers_dev = true\n[[services]]\nbinding = "BACKEND"\nservice = "backend"\n[[services]]\nbinding = "ADMIN"\nservice = "backend"\nentrypoint = "Admin"\n`,
    });
    expect(frontend.code, frontend.stderr + frontend.stdout).toBe(0);
  }, 240_000);
  afterAll(async () => ledge?.close());

  it('fetch() through the binding reaches the bound script, which workers.dev does not route', async () => {
    const answer = await call('frontend', '/fetch');
    expect(answer.text).toBe('v1 POST /hello');
    expect((await call('backend', '/hello')).status).toBe(404);
  });

  it('JS RPC reaches the default WorkerEntrypoint and a named entrypoint, with arguments and return values', async () => {
    expect(JSON.parse((await call('frontend', '/rpc')).text)).toEqual({ sum: 5, at: '1970-01-01T00:00:00.000Z' });
    expect(JSON.parse((await call('frontend', '/admin')).text)).toEqual(['v1', 'ann', 1]);
  });

  it('a binding to a missing script, or to a script of another account, is refused at deploy with 10143', async () => {
    const missing = await deploy(ledge, {
      name: 'orphan',
      source: FRONTEND,
      toml: '[[services]]\nbinding = "BACKEND"\nservice = "nowhere"\n',
    });
    expect(missing.code).not.toBe(0);
    expect(missing.stdout + missing.stderr).toContain("Target script 'nowhere' not found");
    expect(missing.stdout + missing.stderr).toContain('10143');

    const other = await tenant(ledge, 'Other');
    const otherToken = other.tokenHeaders.authorization!.slice('Bearer '.length);
    const theirs = await deploy(
      ledge,
      { name: 'their-secret', source: BACKEND('theirs') },
      otherToken,
      other.accountId,
    );
    expect(theirs.code, theirs.stderr + theirs.stdout).toBe(0);
    const reach = await deploy(ledge, {
      name: 'reacher',
      source: FRONTEND,
      toml: '[[services]]\nbinding = "BACKEND"\nservice = "their-secret"\n',
    });
    expect(reach.code).not.toBe(0);
    expect(reach.stdout + reach.stderr).toContain("Target script 'their-secret' not found");
  }, 240_000);

  it('a script that is not bound has no way to the bound one', async () => {
    const stranger = await deploy(ledge, { name: 'stranger', source: FRONTEND, toml: 'workers_dev = true' });
    expect(stranger.code, stranger.stderr + stranger.stdout).toBe(0);
    expect(JSON.parse((await call('stranger', '/bindings')).text)).toEqual([]);
    expect((await call('stranger', '/fetch')).text).toMatch(/^binding failed: /);

    // Even knowing where the bound entrypoint's socket is, an isolate cannot open it.
    const socket = serviceSocketPath(join(ledge.dataDir, 'runtime', 'sockets'), ledge.accountId, 'backend', 'Admin');
    expect(lstatSync(socket).isSymbolicLink()).toBe(true);
    const prober = await deploy(ledge, {
      name: 'prober',
      source: `import { connect } from 'cloudflare:sockets';
export default {
  async fetch(request, env) {
    const tries = [];
    for (const address of ['unix:' + env.SOCKET, { hostname: env.SOCKET, port: 80 }, { hostname: 'unix:' + env.SOCKET, port: 80 }]) {
      try {
        const socket = connect(address);
        await socket.opened;
        tries.push('opened');
      } catch (error) {
        tries.push('refused');
      }
    }
    return Response.json(tries);
  },
};
`,
      toml: `workers_dev = true\n[vars]\nSOCKET = ${JSON.stringify(socket)}\n`,
    });
    expect(prober.code, prober.stderr + prober.stdout).toBe(0);
    expect(JSON.parse((await call('prober', '/')).text)).toEqual(['refused', 'refused', 'refused']);
  }, 180_000);

  it('ledge deploy reads [[services]] from the wrangler config', async () => {
    const cwd = project({
      name: 'cli-caller',
      source: FRONTEND,
      toml: `workers_dev = true\n[[services]]\nbinding = "ADMIN"\nservice = "backend"\nentrypoint = "Admin"\n`,
    });
    const deployed = await runCli(['deploy'], { env: cliEnv(ledge), cwd });
    expect(deployed.code, deployed.stderr + deployed.stdout).toBe(0);
    expect(JSON.parse((await call('cli-caller', '/admin')).text)).toEqual(['v1', 'ann', 1]);
  });

  it('a binding to an entrypoint the target does not export fails its calls, and only those', async () => {
    const typo = await deploy(ledge, {
      name: 'typo',
      source: FRONTEND,
      toml: `workers_dev = true\n[[services]]\nbinding = "ADMIN"\nservice = "backend"\nentrypoint = "Nope"\n`,
    });
    expect(typo.code, typo.stderr + typo.stdout).toBe(0);
    expect((await call('typo', '/admin')).text).toMatch(/^binding failed: /);
    expect(JSON.parse((await call('frontend', '/admin')).text)).toEqual(['v1', 'ann', 1]);
    const status = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/runtime/scripts`);
    expect(JSON.stringify(status.body.result)).not.toContain('failed');
  });

  it('the bound script crashing fails the call with an error, and the caller keeps its process', async () => {
    const before = ledge.server.platform.functions.runtime.scriptPids(ledge.accountId, 'frontend');
    const exploded = await call('frontend', '/explode');
    expect(exploded.status).toBe(502);
    expect(exploded.text).toMatch(/^binding failed: /);
    expect(ledge.server.platform.functions.runtime.scriptPids(ledge.accountId, 'frontend')).toEqual(before);
    expect((await call('frontend', '/')).text).toBe('frontend alive');
    // The target's process is restarted, and the binding reaches the new one.
    await waitFor(async () => (await call('frontend', '/admin')).status === 200, 'the restarted target', {
      timeoutMs: 30_000,
    });
  });

  it("follows the target's current deployment: a redeploy is reached, a deleted target fails the call", async () => {
    const redeployed = await deploy(ledge, { name: 'backend', source: BACKEND('v2'), toml: 'workers_dev = false' });
    expect(redeployed.code, redeployed.stderr + redeployed.stdout).toBe(0);
    await waitFor(async () => (await call('frontend', '/admin')).text.includes('v2'), 'the redeployed target', {
      timeoutMs: 30_000,
    });
    expect((await call('frontend', '/fetch')).text).toBe('v2 POST /hello');

    // Bound by others: refused unless forced (Cloudflare's 10064); wrangler lists the callers and forces.
    const refused = await api(ledge, 'DELETE', `/accounts/${ledge.accountId}/workers/scripts/backend`);
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0]).toMatchObject({ code: 10064 });
    const references = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts/backend/references`);
    expect(references.body.result.services.incoming.map((r: { service: string }) => r.service).sort()).toEqual([
      'cli-caller',
      'frontend',
      'typo',
    ]);
    const deleted = await runWrangler(['delete', '--name', 'backend'], {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      input: 'y\ny\n',
    });
    expect(deleted.code, deleted.stderr + deleted.stdout).toBe(0);
    expect(deleted.stdout + deleted.stderr).toContain(
      'Worker frontend (production) uses this Worker as a Service Binding',
    );
    await waitFor(async () => (await call('frontend', '/rpc')).status === 502, 'the deleted target', {
      timeoutMs: 30_000,
    });
    expect((await call('frontend', '/rpc')).text).toMatch(/^binding failed: /);
    expect((await call('frontend', '/')).text).toBe('frontend alive');
  });
});

/** One script on the server (the direct generation): a binding to itself stays in its process. */
describe('a service binding to the script itself, on the direct generation', () => {
  let ledge: TestLedge;
  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
  });
  afterAll(async () => ledge?.close());

  it('fetch and RPC through a binding to its own entrypoints', async () => {
    const solo = await deploy(ledge, {
      name: 'solo',
      source: `import { WorkerEntrypoint } from 'cloudflare:workers';
export class Admin extends WorkerEntrypoint { greet(name) { return 'hi ' + name; } }
export default class extends WorkerEntrypoint {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === '/inner') return new Response('inner ' + new URL(request.url).host);
    if (path === '/rpc') return new Response(await this.env.ADMIN.greet('bo') + ' / ' + (await this.env.SELF.twice(4)));
    return this.env.SELF.fetch('http://elsewhere/inner');
  }
  twice(n) { return n * 2; }
}
`,
      toml: `workers_dev = true\n[[services]]\nbinding = "SELF"\nservice = "solo"\n[[services]]\nbinding = "ADMIN"\nservice = "solo"\nentrypoint = "Admin"\n`,
    });
    expect(solo.code, solo.stderr + solo.stdout).toBe(0);
    const host = `solo.${await accountSubdomain(ledge)}.localhost`;
    expect(ledge.server.platform.functions.runtime.scriptPids(ledge.accountId, 'solo')).toEqual(
      ledge.server.platform.functions.runtime.pids,
    );
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('inner elsewhere');
    expect((await callFunction(functionsPort(ledge), host, '/rpc')).text).toBe('hi bo / 8');
  });
});

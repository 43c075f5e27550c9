import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { benchServerArgs, freePort } from '../functions/processes.ts';
import type { BenchCredentials } from '../functions/tutorial.ts';

export const ROOT = resolve(import.meta.dirname, '../..');
export const CREDS: BenchCredentials = {
  email: 'bench@example.com',
  key: '0123456789abcdef0123456789abcdef01234',
  account: '0123456789abcdef0123456789abcdef',
};

export interface BenchLedge {
  child: ChildProcess;
  apiPort: number;
  fnPort: number;
  dataDir: string;
  /** The workers.dev host of a script (`<script>.<subdomain>.localhost`). */
  host(script: string): Promise<string>;
}

/**
 * A Ledge server through bin/ledge (as `npm start` runs it), embedded SQLite, on free ports; from `root`, a
 * checkout of another commit with its node_modules, to compare two builds in one run.
 */
export async function startBenchLedge(work: string, root = ROOT, name = 'ledge'): Promise<BenchLedge> {
  const dataDir = join(work, name);
  const [apiPort, fnPort] = [await freePort(), await freePort()];
  const child = spawn(join(root, 'bin/ledge'), benchServerArgs(root, dataDir, apiPort, fnPort), {
    env: {
      ...process.env,
      LEDGE_LOG_LEVEL: 'warn',
      LEDGE_BOOTSTRAP_EMAIL: CREDS.email,
      LEDGE_BOOTSTRAP_API_KEY: CREDS.key,
      LEDGE_BOOTSTRAP_ACCOUNT_ID: CREDS.account,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((r) => createInterface({ input: child.stdout! }).once('line', r));
  child.stdout!.resume();
  return {
    child,
    apiPort,
    fnPort,
    dataDir,
    host: async (script) => {
      const res = await fetch(`http://127.0.0.1:${apiPort}/client/v4/accounts/${CREDS.account}/workers/subdomain`, {
        headers: { 'x-auth-email': CREDS.email, 'x-auth-key': CREDS.key },
      });
      const { result } = (await res.json()) as { result: { subdomain: string } };
      return `${script}.${result.subdomain}.localhost`;
    },
  };
}

/** The environment wrangler runs with against a bench Ledge: a throwaway HOME, no metrics, the global key. */
export function wranglerEnv(apiUrl: string, home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    CLOUDFLARE_API_BASE_URL: apiUrl,
    CLOUDFLARE_EMAIL: CREDS.email,
    CLOUDFLARE_API_KEY: CREDS.key,
    CLOUDFLARE_ACCOUNT_ID: CREDS.account,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_HIDE_BANNER: 'true',
    NO_COLOR: '1',
    CI: 'true',
  };
}

export const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');

export function benchWorkDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ledge-bench-assets-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** GET through the functions port with a Host (fetch cannot set one). */
export function getWithHost(port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolvePromise, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

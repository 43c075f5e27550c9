import type { ChildProcess } from 'node:child_process';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { WorkerdR2Service } from '../../src/r2/index.ts';
import { REPO_ROOT, tempDir } from '../helpers/ledge.ts';
import { spawnBoundToParent } from '../../src/workerd/workerd-process.ts';

export const WORKERD = join(REPO_ROOT, 'node_modules/.bin/workerd');

export interface RunningWorkerd {
  url: string;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

const capnpString = (value: string) => JSON.stringify(value);

/**
 * Starts real workerd with one worker (`scriptPath`) whose `BUCKET` r2Bucket binding points straight at
 * the given external service, as the functions runtime configures it. Listens on 127.0.0.1, on a
 * port picked by workerd and read from --control-fd.
 */
export async function startWorkerd(scriptPath: string, r2: WorkerdR2Service): Promise<RunningWorkerd> {
  const dir = tempDir('ledge-workerd-');
  copyFileSync(resolve(scriptPath), join(dir, 'worker.js'));
  const headers = r2.injectRequestHeaders
    .map((h) => `(name = ${capnpString(h.name)}, value = ${capnpString(h.value)})`)
    .join(', ');
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "r2", external = (address = ${capnpString(r2.address)}, http = (injectRequestHeaders = [${headers}]))),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2025-01-01",
  bindings = [ (name = "BUCKET", r2Bucket = "r2") ],
);
`,
  );
  const child = spawnBoundToParent(WORKERD, ['serve', join(dir, 'config.capnp'), '--control-fd=3'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolvePort, reject) => {
    const lines = createInterface({ input: child.stdio[3] as Readable });
    lines.on('line', (line) => {
      const event = JSON.parse(line) as { event?: string; port?: number };
      if (event.event === 'listen' && event.port) resolvePort(event.port);
    });
    child.once('exit', (code) => reject(new Error(`workerd exited (${code}): ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

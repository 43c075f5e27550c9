import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { workerdBinary } from '../../src/workerd/workerd-process.ts';
import { freePort } from './processes.ts';

/** The hello-world's one module: answers 1 KiB from memory. */
export const HELLO_MODULE = `const body = ${JSON.stringify('k'.repeat(1024))};\nexport default { fetch() { return new Response(body); } };\n`;

/**
 * The ceiling of a small function request on this machine: one workerd process (as a Ledge process runs one
 * script) whose worker answers 1 KiB from memory, with no platform around it and no storage. Small-request
 * figures are quoted as a share of it, measured in the same rounds (issue 31).
 */
export async function startWorkerdHello(work: string): Promise<{ child: ChildProcess; port: number }> {
  const dir = join(work, 'hello');
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'hello.js'), HELLO_MODULE);
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";\nconst config :Workerd.Config = (\n` +
      `  services = [(name = "hello", worker = (modules = [(name = "hello.js", esModule = embed "hello.js")], compatibilityDate = "2025-01-01"))],\n` +
      `  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "hello")],\n);\n`,
  );
  const child = spawn(workerdBinary(), ['serve', join(dir, 'config.capnp')], { stdio: 'ignore' });
  return { child, port };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { benchServerArgs } from '../functions/processes.ts';

/**
 * A `ledge server` process for the benches that talk to one from outside: the S3 benches (bench/s3/run.ts,
 * bench/s3/large-object-memory.ts) and the CLI's memory (bench/cli/transfer-memory.ts).
 */
const ROOT = resolve(import.meta.dirname, '../..');
export const TOKEN = 'bench-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
export const ACCOUNT = '0123456789abcdef0123456789abcdef';

export function waitForLine(child: ChildProcess, match: (line: string) => boolean): Promise<string> {
  return new Promise((resolveLine, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (match(line)) resolveLine(line);
    });
    child.once('exit', (code) => reject(new Error(`process exited (${code}) before it was ready`)));
  });
}

/** `nodeArgs`: flags for the server's Node (e.g. `--cpu-prof` to see where a scenario's time goes). */
export async function startLedge(dataDir: string, nodeArgs: string[] = []) {
  const child = spawn(
    process.execPath,
    [...nodeArgs, join(ROOT, 'src/cli/main.ts'), ...benchServerArgs(ROOT, dataDir, 0, 0), '--functions-processes', '1'],
    {
      env: {
        ...process.env,
        LEDGE_LOG_LEVEL: 'warn',
        LEDGE_BOOTSTRAP_EMAIL: 'bench@example.com',
        LEDGE_BOOTSTRAP_API_KEY: '0123456789abcdef0123456789abcdef01234',
        LEDGE_BOOTSTRAP_API_TOKEN: TOKEN,
        LEDGE_BOOTSTRAP_ACCOUNT_ID: ACCOUNT,
        LEDGE_CONFIG_DIR: dataDir,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const info = JSON.parse(await waitForLine(child, (line) => line.startsWith('{'))) as {
    api_url: string;
    s3_api_port: number;
  };
  return { child, apiUrl: info.api_url, s3Port: info.s3_api_port };
}

/** The S3 key pair of the bench token, as R2 makes it (the token's id; the SHA-256 hex of its value). */
export async function s3CredentialsFor(apiUrl: string): Promise<{ accessKeyId: string; secretAccessKey: string }> {
  const response = await fetch(`${apiUrl}/user/tokens/verify`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const verify = (await response.json()) as { result: { id: string } };
  return { accessKeyId: verify.result.id, secretAccessKey: createHash('sha256').update(TOKEN).digest('hex') };
}

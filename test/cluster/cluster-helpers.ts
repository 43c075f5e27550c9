import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';
import type { S3Server } from '../helpers/s3-server.ts';
import type { LedgeTarget } from '../notifications/api-helpers.ts';

/** One `ledge server` process of a cluster: its API as the test helpers take it, and its public ports. */
export interface ClusterNode extends LedgeTarget {
  name: string;
  process: SpawnedLedge;
  functionsPort: number;
  trafficPort: number;
}

export interface TestCluster {
  nodes: ClusterNode[];
  databaseUrl: string;
  bucket: string;
  /** Stops every node still running (SIGTERM) and drops the database. */
  stop(): Promise<void>;
}

/**
 * Starts `count` real `ledge server` processes on one PostgreSQL database and one S3 bucket, all at once (so
 * the first start's bootstrap races across nodes), sharing the secrets key as an operator would configure it.
 */
export async function startCluster(
  s3: S3Server,
  count: number,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<TestCluster> {
  const database = await freshPostgresDatabase();
  const bucket = `ledge-${randomBytes(4).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    LEDGE_DATABASE_URL: database.url,
    LEDGE_SECRET_KEY: randomBytes(32).toString('base64'),
    LEDGE_S3_ENDPOINT: s3.endpoint,
    LEDGE_S3_REGION: s3.region,
    LEDGE_S3_BUCKET: bucket,
    LEDGE_S3_ACCESS_KEY_ID: s3.accessKeyId,
    LEDGE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    LEDGE_S3_FORCE_PATH_STYLE: 'true',
    LEDGE_FUNCTIONS_PROCESSES: '1',
    ...extraEnv,
  };
  const spawned = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      spawnLedge(tempDir(`ledge-node${i + 1}-`), [], { ...env, LEDGE_NODE_ID: `node-${i + 1}` }),
    ),
  );
  const nodes = spawned.map((process, i) => ({
    name: `node-${i + 1}`,
    process,
    apiUrl: process.apiUrl,
    accountId: TEST_CREDENTIALS.accountId,
    tokenHeaders: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
    functionsPort: Number(process.info['functions_port']),
    trafficPort: Number(process.info['traffic_port']),
  }));
  return {
    nodes,
    databaseUrl: database.url,
    bucket,
    stop: async () => {
      await Promise.all(nodes.map((node) => node.process.stop('SIGTERM')));
      await database.drop();
    },
  };
}

/** GET (or another method) on a node's functions port with the function's Host; never throws. */
export function callFunctionOn(port: number, host: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

/** Uploads a module Worker the way wrangler does (multipart: metadata + one module); `metadata` adds fields. */
export async function uploadWorker(
  node: LedgeTarget,
  name: string,
  source: string,
  bindings: unknown[] = [],
  metadata: Record<string, unknown> = {},
): Promise<number> {
  return (await uploadWorkerAnswer(node, name, source, bindings, metadata)).status;
}

/** uploadWorker's answer whole: its status and its v4 envelope. */
export async function uploadWorkerAnswer(
  node: LedgeTarget,
  name: string,
  source: string,
  bindings: unknown[] = [],
  metadata: Record<string, unknown> = {},
): Promise<{ status: number; body: { success: boolean; errors: { code: number; message: string }[] } }> {
  const form = new FormData();
  form.set(
    'metadata',
    JSON.stringify({ main_module: 'index.js', bindings, compatibility_date: '2025-01-01', ...metadata }),
  );
  form.set('index.js', new File([source], 'index.js', { type: 'application/javascript+module' }));
  const response = await fetch(`${node.apiUrl}/accounts/${node.accountId}/workers/scripts/${name}`, {
    method: 'PUT',
    headers: node.tokenHeaders,
    body: form,
  });
  return { status: response.status, body: (await response.json()) as never };
}

/**
 * The settings of nodes whose engines run as workerd clusters (PostgreSQL + S3), for tests that start the nodes one
 * at a time themselves: one functions process, fast heartbeats, leases of 10 s instead of 20 s. Not shorter: workerd
 * shortens its bounds on bucket requests by as much, and an instance whose requests stall past them leaves the
 * cluster (on a loaded test machine, 100 ms at a divisor of 10 did). The hand-off time is the default one: a
 * call in a stopping instance retries a retryable failure for about 8.5 s (isolate/cluster-objects.ts), and a
 * shorter stop ends the process under it (a redeploy under traffic failed one increment with 4 s).
 */
export function workerdClusterEnv(s3: S3Server, databaseUrl: string): NodeJS.ProcessEnv {
  return {
    LEDGE_DATABASE_URL: databaseUrl,
    LEDGE_SECRET_KEY: randomBytes(32).toString('base64'),
    LEDGE_S3_ENDPOINT: s3.endpoint,
    LEDGE_S3_REGION: s3.region,
    LEDGE_S3_BUCKET: `ledge-${randomBytes(4).toString('hex')}`,
    LEDGE_S3_ACCESS_KEY_ID: s3.accessKeyId,
    LEDGE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    LEDGE_S3_FORCE_PATH_STYLE: 'true',
    LEDGE_FUNCTIONS_PROCESSES: '1',
    LEDGE_CLUSTER_HEARTBEAT_MS: '500',
    LEDGE_CLUSTER_UNSAFE_TIME_DIVISOR: '2',
    LEDGE_CLUSTER_STOP_TIMEOUT_MS: '8000',
  };
}

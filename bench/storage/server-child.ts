// Benchmark helper: runs a Ledge server in its own process (so its RSS can be measured alone) and
// prints one JSON line with the API URL, the account, and the wire backend service of a bucket.
import { resolveServerConfig, startServer } from '../../src/server/index.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { systemClock } from '../../src/shared/clock.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: server-child.ts <data-dir>');
const config = resolveServerConfig(
  { dataDir, host: '127.0.0.1', port: 0, functionsPort: 0 },
  {
    LEDGE_BOOTSTRAP_ACCOUNT_ID: '0123456789abcdef0123456789abcdef',
    LEDGE_BOOTSTRAP_API_TOKEN: 'bench-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  },
);
const server = await startServer(config, createLogger('warn', systemClock), { clock: systemClock });
const accountId = '0123456789abcdef0123456789abcdef';
await server.platform.storage.buckets.create(accountId, { name: 'bench' });
process.stdout.write(
  `${JSON.stringify({
    apiUrl: server.apiUrl,
    accountId,
    token: 'bench-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    wire: server.platform.r2Backend.workerdService(accountId, 'bench'),
  })}\n`,
);
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));

import { startLedge } from './test/helpers/ledge.ts';
import { s3CredentialsOf } from './test/s3/helpers.ts';
const ledge = await startLedge();
const c = await s3CredentialsOf(ledge);
console.log(
  JSON.stringify({ port: ledge.server.platform.s3Api.port, ...c, apiUrl: ledge.apiUrl, token: ledge.apiToken }),
);
process.on('SIGTERM', async () => {
  await ledge.close();
  process.exit(0);
});
setInterval(() => {}, 1000);

/**
 * Child process of the checker benchmark: N real loopback HTTP origins, so their CPU is not counted
 * against the checker. Reports its ports over IPC, answers {type:"count"} with the requests served,
 * and exits when the parent disconnects.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const count = Number(process.argv[2] ?? '2000');
let served = 0;
const servers: Server[] = [];
const ports: number[] = [];
for (let i = 0; i < count; i++) {
  const server = createServer((_req, res) => {
    served++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('healthy origin');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  servers.push(server);
  ports.push((server.address() as AddressInfo).port);
}
process.send?.({ type: 'ports', ports });
process.on('message', (message: { type: string }) => {
  if (message.type === 'count') process.send?.({ type: 'count', served });
});
process.on('disconnect', () => {
  for (const server of servers) server.close();
  process.exit(0);
});

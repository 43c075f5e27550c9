import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { startLedge } from '../helpers/ledge.ts';

it('names --traffic-tls-port when the HTTPS port is taken', async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const port = (holder.address() as { port: number }).port;
  try {
    await expect(startLedge({ flags: { trafficTlsPort: port } })).rejects.toThrow(
      new RegExp(
        `HTTPS traffic port ${port} on 127.0.0.1 is in use .*--traffic-tls-port \\(env LEDGE_TRAFFIC_TLS_PORT\\)`,
      ),
    );
  } finally {
    holder.close();
  }
});

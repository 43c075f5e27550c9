import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveServerConfig } from '../../src/server/index.ts';
import { startLedge } from '../helpers/ledge.ts';

describe('the traffic port setting', () => {
  let holder: Server;
  let taken: number;

  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    taken = (holder.address() as { port: number }).port;
  });
  afterAll(() => holder.close());

  it('defaults to 8789, reads LEDGE_TRAFFIC_PORT, and a flag wins', () => {
    expect(resolveServerConfig({}, {}).trafficPort).toBe(8789);
    expect(resolveServerConfig({}, { LEDGE_TRAFFIC_PORT: '9000' }).trafficPort).toBe(9000);
    expect(resolveServerConfig({ trafficPort: '0' }, { LEDGE_TRAFFIC_PORT: '9000' }).trafficPort).toBe(0);
    expect(() => resolveServerConfig({ trafficPort: 'x' }, {})).toThrow('invalid port: x');
  });

  it('must differ from the API and functions ports', () => {
    expect(() => resolveServerConfig({ port: 9100, trafficPort: 9100 }, {})).toThrow(
      'the load balancer traffic port must differ from the others (9100 is taken): use --traffic-port or --port',
    );
    expect(() => resolveServerConfig({ functionsPort: 9101, trafficPort: 9101 }, {})).toThrow('--functions-port');
  });

  it('a port another process holds stops the start with an error naming it and the flag', async () => {
    await expect(startLedge({ flags: { trafficPort: taken } })).rejects.toThrow(
      `load balancer traffic port ${taken} on 127.0.0.1 is in use by another process`,
    );
  });
});

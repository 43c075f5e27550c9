import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { resolveServerConfig } from '../../src/server/index.ts';
import { startLedge } from '../helpers/ledge.ts';

describe('the S3 API port', () => {
  it('defaults to 8790, reads LEDGE_S3_API_PORT, a flag wins, and the blob --s3-* settings stay apart', () => {
    expect(resolveServerConfig({}, {}).s3ApiPort).toBe(8790);
    expect(resolveServerConfig({}, { LEDGE_S3_API_PORT: '9100' }).s3ApiPort).toBe(9100);
    expect(resolveServerConfig({ s3ApiPort: '0' }, { LEDGE_S3_API_PORT: '9100' }).s3ApiPort).toBe(0);
    expect(() => resolveServerConfig({ s3ApiPort: 'x' }, {})).toThrow('invalid port: x');
    expect(resolveServerConfig({ s3ApiPort: 9101 }, {}).s3).toBeUndefined();
    expect(() => resolveServerConfig({ port: 9102, s3ApiPort: 9102 }, {})).toThrow(
      'the S3 API port must differ from the others (9102 is taken): use --s3-api-port or --port',
    );
  });

  it('a port in use fails the start with the flag that changes it', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    try {
      await expect(startLedge({ flags: { s3ApiPort: taken } })).rejects.toThrow('--s3-api-port');
    } finally {
      blocker.close();
    }
  });
});

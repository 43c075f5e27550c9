import { describe, expect, it } from 'vitest';
import { serializeConfig } from '../config/serialize.ts';
import { d1Engine, d1SocketPath } from './d1.ts';

describe("an account's D1 engine config", () => {
  const paths = { dataDir: '/data/engines/acc/d1', socketDir: '/data/runtime/engines/abc' };
  const ids = ['11111111-2222-3333-4444-555555555555', '66666666-7777-8888-9999-000000000000'];

  it("runs workerd's d1.js with the size cap, one socket per database carrying its id as props", () => {
    const built = d1Engine('acc', ids, paths, { maxDatabaseBytes: 1024 * 1024 });
    const text = serializeConfig({ services: built.services, sockets: built.sockets });
    expect(text).toContain('bundled = "/workerd/d1.js"');
    expect(text).toContain('uniqueKey = "ledge-d1-acc"');
    expect(text).toContain('localDisk = "d1-storage"');
    expect(text).toContain('(name = "MAX_DATABASE_BYTES", json = "1048576")');
    expect(built.sockets.map((s) => [s.address, s.service])).toEqual(
      ids.map((id) => [
        `unix:${d1SocketPath(paths.socketDir, id)}`,
        { name: 'd1', props: { json: JSON.stringify({ database: id }) } },
      ]),
    );
    expect(built.directories).toEqual([paths.dataDir, paths.socketDir]);
  });

  it('keeps socket paths short enough for a unix socket', () => {
    const path = d1SocketPath(`/var/lib/ledge/runtime/engines/${'a'.repeat(12)}`, ids[0]!);
    expect(Buffer.byteLength(path)).toBeLessThan(108);
    expect(path).not.toContain('-4444-');
  });
});

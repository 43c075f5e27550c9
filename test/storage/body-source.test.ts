import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, describe, expect, it } from 'vitest';
import { bodyStream, releaseBody } from '../../src/storage/index.ts';

/** The one body type of object reads: each form streams the same bytes, and a released one lets go of its file. */
describe('BodySource', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledge-body-source-'));
  const path = join(dir, 'blob');
  writeFileSync(path, '0123456789');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('streams bytes, a stream and a file span as the same bytes', async () => {
    expect((await buffer(bodyStream({ kind: 'bytes', bytes: Buffer.from('2345') }))).toString()).toBe('2345');
    const stream = Readable.from([Buffer.from('23'), Buffer.from('45')]);
    expect((await buffer(bodyStream({ kind: 'stream', stream }))).toString()).toBe('2345');
    const handle = await open(path, 'r');
    const file = { kind: 'file' as const, file: { handle, offset: 2, length: 4 } };
    expect((await buffer(bodyStream(file))).toString()).toBe('2345');
    const empty = await open(path, 'r');
    expect((await buffer(bodyStream({ kind: 'file', file: { handle: empty, offset: 3, length: 0 } }))).length).toBe(0);
  });

  it('refuses to stream a local body, whose reader opens the file itself', () => {
    expect(() => bodyStream({ kind: 'local', localFile: { namespace: 'a/b', path: 'ab/cd' } })).toThrow(/local body/);
  });

  it('releases a file by closing it and a stream by destroying it', async () => {
    const handle = await open(path, 'r');
    await releaseBody({ kind: 'file', file: { handle, offset: 0, length: 10 } });
    await expect(handle.read(Buffer.alloc(1), 0, 1, 0)).rejects.toThrow();
    const stream = Readable.from([Buffer.from('x')]);
    await releaseBody({ kind: 'stream', stream });
    expect(stream.destroyed).toBe(true);
  });
});

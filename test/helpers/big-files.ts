import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';

const MiB = 1024 * 1024;

/**
 * Writes a file of `mib` MiB, each MiB different (so a misplaced part shows in the hash), without holding it
 * in memory; answers its sha256. For transfers measured by their memory (the CLI's tests and bench/cli).
 */
export async function writeNumberedFile(path: string, mib: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  const block = randomBytes(MiB);
  for (let i = 0; i < mib; i++) {
    block.writeUInt32BE(i, 0);
    hash.update(block);
    if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return hash.digest('hex');
}

/** The sha256 of a file, read as a stream. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

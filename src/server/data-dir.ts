import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SecretBox } from '../shared/crypto.ts';

/** Layout of the data dir. Everything Ledge persists lives under it. */
export function dataPaths(dataDir: string) {
  return {
    root: dataDir,
    database: join(dataDir, 'ledge.db'),
    credentials: join(dataDir, 'credentials.json'),
    secretKey: join(dataDir, 'secret.key'),
    blobs: join(dataDir, 'blobs'),
    runtime: join(dataDir, 'runtime'),
    mail: join(dataDir, 'mail'),
    logs: join(dataDir, 'logs'),
  };
}

export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

/** Loads the at-rest encryption key: from config if given, else from `secret.key` (created 0600 once). */
export function loadSecretBox(dataDir: string, configuredKey?: string): SecretBox {
  if (configuredKey) {
    const key = Buffer.from(configuredKey, 'base64');
    if (key.length !== 32) throw new Error('LEDGE_SECRET_KEY must be 32 bytes, base64-encoded');
    return new SecretBox(key);
  }
  const path = dataPaths(dataDir).secretKey;
  if (!existsSync(path)) writeFileSync(path, SecretBox.generateKey().toString('base64'), { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return new SecretBox(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64'));
}

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

/** Debian's postgresql-15 (what `.ci/run` installs). */
const BIN = '/usr/lib/postgresql/15/bin';

export interface PostgresServer {
  /** Superuser URL: creates one database per Ledge under test. */
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL 15 cluster on 127.0.0.1 (free port, no unix socket, scram auth, fsync
 * off: test data only) and returns its superuser URL. PostgreSQL refuses to run as root, so as root the
 * cluster belongs to the `postgres` user the Debian package creates.
 */
export async function startPostgresServer(): Promise<PostgresServer> {
  if (!existsSync(join(BIN, 'pg_ctl'))) {
    throw new Error(`PostgreSQL 15 is not installed (${BIN}): apt-get install postgresql-15, or run .ci/run`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'ledge-pg-'));
  const data = join(dir, 'data');
  const password = randomBytes(18).toString('hex');
  const asRoot = userInfo().uid === 0;
  const owner = asRoot ? postgresUser() : undefined;
  writeFileSync(join(dir, 'pw'), password, { mode: 0o600 });
  if (owner) {
    chmodSync(dir, 0o700);
    chownSync(dir, owner.uid, owner.gid);
    chownSync(join(dir, 'pw'), owner.uid, owner.gid);
  }
  const as = (cmd: string, args: string[]) =>
    owner ? run('/usr/sbin/runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args);
  await as(join(BIN, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=scram-sha-256',
    `--pwfile=${join(dir, 'pw')}`,
    '--no-sync',
    '-E',
    'UTF8',
    '--locale=C.UTF-8',
  ]);
  let lastError: unknown;
  // A free port can be taken between the probe and the bind: try a few.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const options = [
      `-c listen_addresses=127.0.0.1`,
      `-c port=${port}`,
      `-c unix_socket_directories=''`,
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=300',
    ].join(' ');
    try {
      await as(join(BIN, 'pg_ctl'), ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '30', '-o', options, 'start']);
    } catch (error) {
      lastError = error;
      continue;
    }
    const adminUrl = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
    return {
      adminUrl,
      port,
      async stop() {
        await as(join(BIN, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']).catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8').slice(-2000) : '';
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`PostgreSQL did not start: ${String(lastError)}\n${log}`);
}

/** A fresh database owned by a fresh non-superuser role, as an operator would set Ledge up. */
export async function createTestDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ledge_${randomBytes(6).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
    await admin.unsafe(`CREATE DATABASE ${name} OWNER ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.username = name;
  url.password = password;
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const sql = postgres(adminUrl, { max: 1, onnotice: () => undefined });
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await sql.unsafe(`DROP ROLE IF EXISTS ${name}`);
      } finally {
        await sql.end();
      }
    },
  };
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('no postgres user: install postgresql-15 (it creates one)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/server/settings/index.ts';
import { REPO_ROOT } from '../helpers/ledge.ts';

/**
 * The server's settings are declared once (src/server/settings/schema.ts) and parsed once
 * (src/server/config.ts), and each subsystem is handed its typed part: no other file reads the environment.
 * The files that must are listed with why, and with the variables each may read.
 */
const MAY_READ_ENV: Record<string, { why: string; names: string[] }> = {
  'src/server/config.ts': { why: 'the one parse of the settings, from process.env by default', names: [] },
  'src/server/stop-request.ts': {
    why: 'npm_lifecycle_event says whether npm started the server (how it stops), not a setting',
    names: [],
  },
  'src/shared/server-registry.ts': {
    why: "the CLI's config dir, where a running server registers itself for the CLI to find",
    names: ['LEDGE_CONFIG_DIR'],
  },
  'src/cli/settings.ts': {
    why: "the CLI's own client settings: where and as whom it connects",
    names: ['LEDGE_API_TOKEN', 'LEDGE_EMAIL', 'LEDGE_API_KEY', 'LEDGE_API_URL', 'LEDGE_ACCOUNT_ID'],
  },
  'src/cli/local-server.ts': {
    why: 'CLI commands (admin, mail) find the data dir of the server they act on as the server does',
    names: ['LEDGE_DATA_DIR'],
  },
  'src/cli/endpoints.ts': {
    why: "the CLI finds the running server's registry (its real S3, traffic and functions ports) where the server wrote it (HOME, XDG_CONFIG_HOME)",
    names: [],
  },
  'src/cli/admin.ts': {
    why: "`ledge admin` runs on a data dir: the environment's database URL wins over the one the dir remembers",
    names: ['LEDGE_DATABASE_URL'],
  },
  'src/cli/notifications.ts': {
    why: 'the secret a `ledge notifications` webhook command sends, a client setting',
    names: ['LEDGE_WEBHOOK_SECRET'],
  },
};

const SETTING_NAMES = new Set(Object.values(SETTINGS).map((setting) => setting.env));
/** LEDGE_* names that are not the server's settings: the CLI's client settings above. */
const CLIENT_NAMES = new Set(
  Object.values(MAY_READ_ENV)
    .flatMap((entry) => entry.names)
    .filter((name) => !SETTING_NAMES.has(name)),
);

function sources(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(REPO_ROOT, path)).isDirectory()) return path === 'src/dashboard/ui' ? [] : sources(path);
    return /\.ts$/.test(name) ? [path] : [];
  });
}

/** Names read as `env['LEDGE_X']`, `env.LEDGE_X` or `process.env[...]`, and whether process.env is touched. */
function envReads(text: string): { processEnv: boolean; names: string[] } {
  const names = [...text.matchAll(/\benv(?:\[\s*['"`](LEDGE_[A-Z0-9_]+)['"`]\s*\]|\.(LEDGE_[A-Z0-9_]+))/g)].map(
    (m) => (m[1] ?? m[2])!,
  );
  return { processEnv: /\bprocess\.env\b/.test(text), names };
}

describe('settings are read in one place', () => {
  const files = sources('src').map((path) => relative(REPO_ROOT, join(REPO_ROOT, path)));

  it('no file below the server reads the environment, but those listed with why', () => {
    const offenders = files.filter((path) => {
      if (MAY_READ_ENV[path]) return false;
      const reads = envReads(readFileSync(join(REPO_ROOT, path), 'utf8'));
      return reads.processEnv || reads.names.length > 0;
    });
    expect(offenders).toEqual([]);
  });

  it('the files listed read only the variables listed for them', () => {
    for (const [path, allowed] of Object.entries(MAY_READ_ENV)) {
      const reads = envReads(readFileSync(join(REPO_ROOT, path), 'utf8'));
      expect({ path, names: reads.names.filter((name) => !allowed.names.includes(name)) }).toEqual({ path, names: [] });
    }
  });

  it('every LEDGE_ variable the code names is a declared setting or a client setting', () => {
    const unknown = new Set<string>();
    for (const path of files) {
      const text = readFileSync(join(REPO_ROOT, path), 'utf8');
      // Whole names only: `LEDGE_BOOTSTRAP_*` in a message is a family, not a variable.
      for (const match of text.matchAll(/\bLEDGE_[A-Z0-9_]*[A-Z0-9]\b(?!_?\*)/g)) {
        const name = match[0];
        // A constant of that name (create-app.ts's LEDGE_ROOT) is no variable of the environment.
        if (new RegExp(`\\b(?:const|let)\\s+${name}\\b`).test(text)) continue;
        if (!SETTING_NAMES.has(name) && !CLIENT_NAMES.has(name)) unknown.add(`${path}: ${name}`);
      }
    }
    expect([...unknown]).toEqual([]);
  });

  it('this check can fail: it sees the reads it is meant to catch', () => {
    expect(envReads("const x = env['LEDGE_PORT'];").names).toEqual(['LEDGE_PORT']);
    expect(envReads('const x = deps.env.LEDGE_NOTIFY_LEASE_MS;').names).toEqual(['LEDGE_NOTIFY_LEASE_MS']);
    expect(envReads("process.env['HOME']").processEnv).toBe(true);
  });
});

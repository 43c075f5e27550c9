import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Auth } from '../client/index.ts';
import { DEFAULT_API_PORT } from '../server/config.ts';
import { CliError } from './errors.ts';

export interface ConnectionFlags {
  apiUrl?: string;
  apiToken?: string;
  email?: string;
  apiKey?: string;
  accountId?: string;
  dataDir?: string;
}

/** What `ledge login` saves. */
export interface SavedConfig {
  api_url?: string;
  api_token?: string;
  email?: string;
  api_key?: string;
  account_id?: string;
}

export interface Connection {
  apiUrl: string;
  auth: Auth;
  accountId: string | undefined;
  /** Where the credentials came from, for `whoami` and error hints. */
  source: 'flags' | 'environment' | 'login' | 'local server';
}

export const DEFAULT_API_URL = `http://127.0.0.1:${DEFAULT_API_PORT}/client/v4`;

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env['LEDGE_CONFIG_DIR'] ?? join(env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'ledge');
  return join(dir, 'config.json');
}

export function readSavedConfig(env: NodeJS.ProcessEnv = process.env): SavedConfig {
  const path = configPath(env);
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as SavedConfig;
  } catch {
    throw new CliError(`cannot read ${path}: not valid JSON (run \`ledge login\` again)`);
  }
}

export function writeSavedConfig(config: SavedConfig, env: NodeJS.ProcessEnv = process.env): string {
  const path = configPath(env);
  mkdirSync(resolve(path, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return path;
}

function readLocalCredentials(dataDir: string): SavedConfig | undefined {
  const path = join(dataDir, 'credentials.json');
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as SavedConfig;
  } catch {
    return undefined;
  }
}

/**
 * Resolves where and as whom to connect: flags > environment (LEDGE_* then CLOUDFLARE_*) > `ledge login`
 * > the local server's credentials.json (zero configuration on the machine that runs `ledge server`).
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Connection {
  const saved = readSavedConfig(env);
  const local = readLocalCredentials(resolve(flags.dataDir ?? env['LEDGE_DATA_DIR'] ?? '.ledge'));
  const envToken = env['LEDGE_API_TOKEN'] ?? env['CLOUDFLARE_API_TOKEN'];
  const envEmail = env['LEDGE_EMAIL'] ?? env['CLOUDFLARE_EMAIL'];
  const envKey = env['LEDGE_API_KEY'] ?? env['CLOUDFLARE_API_KEY'];

  const layers: [Connection['source'], SavedConfig][] = [
    [
      'flags',
      {
        api_url: flags.apiUrl,
        api_token: flags.apiToken,
        email: flags.email,
        api_key: flags.apiKey,
        account_id: flags.accountId,
      },
    ],
    [
      'environment',
      {
        api_url: env['LEDGE_API_URL'] ?? env['CLOUDFLARE_API_BASE_URL'],
        api_token: envToken,
        email: envEmail,
        api_key: envKey,
        account_id: env['LEDGE_ACCOUNT_ID'] ?? env['CLOUDFLARE_ACCOUNT_ID'],
      },
    ],
    ['login', saved],
    ['local server', local ?? {}],
  ];
  const first = (field: keyof SavedConfig) =>
    layers.map(([, layer]) => layer[field]).find((v) => v !== undefined && v !== '');

  for (const [source, layer] of layers) {
    if (layer.api_token)
      return {
        apiUrl: first('api_url') ?? DEFAULT_API_URL,
        auth: { token: layer.api_token },
        accountId: first('account_id'),
        source,
      };
    if (layer.email && layer.api_key) {
      return {
        apiUrl: first('api_url') ?? DEFAULT_API_URL,
        auth: { email: layer.email, key: layer.api_key },
        accountId: first('account_id'),
        source,
      };
    }
    if (layer.email || layer.api_key) {
      throw new CliError(
        `incomplete credentials from ${source}: an email needs an API key and an API key needs an email`,
      );
    }
  }
  throw new CliError(
    'no credentials: start `ledge server` here (it writes .ledge/credentials.json), run `ledge login`, or set LEDGE_API_TOKEN',
  );
}

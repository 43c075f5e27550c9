import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Auth } from '../client/index.ts';
import { DEFAULT_API_PORT } from '../shared/default-ports.ts';
import { configDir, liveServers } from '../shared/server-registry.ts';
import { CliError } from './errors.ts';
import {
  findLocalServer,
  normalizeApiUrl,
  readCredentialsFile,
  registryHint,
  type LocalServer,
} from './local-server.ts';

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
  /** The same, for people: which file or data dir. */
  origin: string;
}

export const DEFAULT_API_URL = `http://127.0.0.1:${DEFAULT_API_PORT}/client/v4`;

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'config.json');
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

/**
 * Resolves where and as whom to connect: flags > environment (LEDGE_* then CLOUDFLARE_*) > `ledge login`
 * > the local server (zero configuration on the machine that runs `ledge server`: the running server is
 * found through the per-user registry from any directory, see local-server.ts).
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Connection {
  const saved = readSavedConfig(env);
  const envToken = env['LEDGE_API_TOKEN'] ?? env['CLOUDFLARE_API_TOKEN'];
  const envEmail = env['LEDGE_EMAIL'] ?? env['CLOUDFLARE_EMAIL'];
  const envKey = env['LEDGE_API_KEY'] ?? env['CLOUDFLARE_API_KEY'];

  const layers: [Connection['source'], SavedConfig, string][] = [
    [
      'flags',
      {
        api_url: flags.apiUrl,
        api_token: flags.apiToken,
        email: flags.email,
        api_key: flags.apiKey,
        account_id: flags.accountId,
      },
      'command-line flags',
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
      'environment variables',
    ],
    ['login', saved, `\`ledge login\` (${configPath(env)})`],
  ];
  const first = (field: keyof SavedConfig) =>
    layers.map(([, layer]) => layer[field]).find((v) => v !== undefined && v !== '');

  // The last layer is looked up only when the others hold no credentials: finding it reads the registry,
  // and several running servers are an error only for a command that needs one of them.
  let local: LocalServer | undefined | null = null;
  const localServer = () =>
    local === null ? (local = findLocalServer({ dataDir: flags.dataDir, apiUrl: first('api_url') }, env)) : local;
  const nextLayer = (index: number): [Connection['source'], SavedConfig, string] | undefined => {
    if (index < layers.length) return layers[index];
    if (index > layers.length) return undefined;
    const server = localServer();
    if (!server) return undefined;
    const credentials = readCredentialsFile(server.dataDir) ?? {};
    // The registry knows the port the server runs on now; credentials.json, the one of its first start.
    const layer = { ...credentials, api_url: server.apiUrl ?? credentials.api_url };
    return ['local server', layer, `the local server (data dir ${server.dataDir})`];
  };

  for (let index = 0; ; index++) {
    const entry = nextLayer(index);
    if (!entry) break;
    const [source, layer, origin] = entry;
    // Credentials without a URL (e.g. only LEDGE_API_TOKEN) go to the running local server, if any.
    const apiUrl = normalizeApiUrl(first('api_url') ?? layer.api_url ?? localServer()?.apiUrl ?? DEFAULT_API_URL);
    const accountId = first('account_id') ?? layer.account_id;
    if (layer.api_token) return { apiUrl, auth: { token: layer.api_token }, accountId, source, origin };
    if (layer.email && layer.api_key) {
      return { apiUrl, auth: { email: layer.email, key: layer.api_key }, accountId, source, origin };
    }
    if (layer.email || layer.api_key) {
      throw new CliError(
        `incomplete credentials from ${origin}: an email needs an API key and an API key needs an email`,
      );
    }
  }
  // A URL no registered server serves, while servers do run elsewhere: say where, rather than "none runs".
  const wanted = first('api_url');
  const elsewhere = wanted ? liveServers(env) : [];
  if (wanted && elsewhere.length > 0) {
    const list = elsewhere.map((s) => `  ${s.api_url}  (data dir ${s.data_dir})`).join('\n');
    throw new CliError(
      `no credentials for ${normalizeApiUrl(wanted)}: no Ledge server registered on this machine serves that URL, ` +
        `but ${elsewhere.length === 1 ? 'one is' : `${elsewhere.length} are`} registered elsewhere:\n${list}\n` +
        'use that --api-url (or none), or give credentials for this URL (--api-token, LEDGE_API_TOKEN, `ledge login`)',
    );
  }
  throw new CliError(
    `no credentials: no running \`ledge server\` is registered in ${registryHint(env)} and there is no ./.ledge/credentials.json. ` +
      'Start `ledge server` (as this user), run `ledge login`, or set LEDGE_API_TOKEN',
  );
}

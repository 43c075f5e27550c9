import { describe, expect, it } from 'vitest';
import { resolveServerConfig } from '../../src/server/index.ts';
import { parseSettings, SETTINGS, SettingError, type SettingKey } from '../../src/server/settings/index.ts';
import { DEFAULT_RETRY } from '../../src/notifications/dispatcher.ts';
import { DEFAULT_HISTORY_RETENTION_MS } from '../../src/notifications/history.ts';
import { DEFAULT_DEPRECATION_INTERVAL_MS } from '../../src/notifications/legacy.ts';
import { MAX_SCRIPTS_PER_ACCOUNT, WORKER_LIMITS } from '../../src/workers/limits.ts';
import { runCli, serverFlags, tempDir } from '../helpers/ledge.ts';

const declared = Object.entries(SETTINGS) as [SettingKey, (typeof SETTINGS)[SettingKey]][];

/** The one line a bad setting stops the server with (the error's message), or undefined when it parses. */
function failure(flags: Parameters<typeof parseSettings>[0], env: NodeJS.ProcessEnv = {}): string | undefined {
  try {
    parseSettings(flags, env);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(SettingError);
    return (error as Error).message;
  }
}

describe('the settings schema', () => {
  it('declares each flag and each environment variable once, with a description of one line', () => {
    const envs = declared.flatMap(([, setting]) => [setting.env, ...setting.alsoEnv]);
    expect(new Set(envs).size).toBe(envs.length);
    const flags = declared.flatMap(([, setting]) => (setting.flag ? [setting.flag] : []));
    expect(new Set(flags).size).toBe(flags.length);
    for (const [key, setting] of declared) {
      expect(setting.env).toMatch(/^LEDGE_[A-Z0-9_]+$/);
      // commander names an option by its flag in camelCase: the key the server reads it by.
      if (setting.flag) expect(setting.flag.slice(2).replace(/-(\w)/g, (_, c: string) => c.toUpperCase())).toBe(key);
      expect(setting.description).not.toContain('\n');
      expect(setting.description.length).toBeGreaterThan(10);
    }
  });

  it('declares the settings added the old way and the two that were undocumented', () => {
    const envs = new Set(declared.map(([, setting]) => setting.env));
    for (const name of [
      'LEDGE_S3_API_PORT',
      'LEDGE_R2_PUBLIC_DOMAIN',
      'LEDGE_SUBREQUESTS_PER_INVOCATION',
      'LEDGE_MAX_SCRIPTS_PER_ACCOUNT',
      'LEDGE_FUNCTIONS_START_TIMEOUT_MS',
      'LEDGE_FUNCTIONS_HOST',
      'LEDGE_LOG_LEVEL',
    ]) {
      expect(envs).toContain(name);
    }
    expect(SETTINGS.s3ApiPort.flag).toBe('--s3-api-port');
  });

  it('gives every default when nothing is set', () => {
    const settings = parseSettings({}, {});
    expect(settings).toMatchObject({
      dataDir: '.ledge',
      host: '127.0.0.1',
      port: 8787,
      functionsPort: 8788,
      trafficPort: 8789,
      s3ApiPort: 8790,
      functionsHost: '127.0.0.1',
      functionsStartTimeoutMs: 15_000,
      subrequestsPerInvocation: 10_000,
      maxScriptsPerAccount: 500,
      r2PublicDomain: 'r2.localhost',
      logLevel: 'info',
      logFormat: 'text',
      s3ForcePathStyle: false,
      egressAllow: [],
    });
    expect(settings.databaseUrl).toBeUndefined();
    expect(settings.secretKey).toBeUndefined();
    expect(settings.functionsProcesses).toBeGreaterThanOrEqual(1);
    expect(settings.functionsProcesses).toBeLessThanOrEqual(4);
  });

  it('takes a flag over its variable, a variable over the default, and an empty value as unset', () => {
    expect(parseSettings({ port: '9001' }, { LEDGE_PORT: '9002' }).port).toBe(9001);
    expect(parseSettings({ port: 0 }, { LEDGE_PORT: '9002' }).port).toBe(0);
    expect(parseSettings({}, { LEDGE_PORT: '9002' }).port).toBe(9002);
    expect(parseSettings({}, { LEDGE_PORT: '' }).port).toBe(8787);
    expect(parseSettings({ s3ForcePathStyle: true }, { LEDGE_S3_FORCE_PATH_STYLE: 'false' }).s3ForcePathStyle).toBe(
      true,
    );
    // A setting without a flag is read from the environment only, whatever the flags say.
    expect(parseSettings({ functionsHost: '0.0.0.0' } as never, {}).functionsHost).toBe('127.0.0.1');
    expect(parseSettings({}, { LEDGE_FUNCTIONS_HOST: '0.0.0.0' }).functionsHost).toBe('0.0.0.0');
    expect(parseSettings({}, { LEDGE_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(parseSettings({}, { AWS_ACCESS_KEY_ID: 'aws' }).s3AccessKeyId).toBe('aws');
    expect(parseSettings({}, { AWS_ACCESS_KEY_ID: 'aws', LEDGE_S3_ACCESS_KEY_ID: 'own' }).s3AccessKeyId).toBe('own');
    expect(parseSettings({}, { LEDGE_R2_PUBLIC_DOMAIN: 'Files.Example.' }).r2PublicDomain).toBe('files.example');
  });

  it('keeps every value inside its range, the bounds included', () => {
    expect(parseSettings({}, { LEDGE_FUNCTIONS_START_TIMEOUT_MS: '600000' }).functionsStartTimeoutMs).toBe(600_000);
    expect(failure({}, { LEDGE_FUNCTIONS_START_TIMEOUT_MS: '600001' })).toBe(
      'invalid LEDGE_FUNCTIONS_START_TIMEOUT_MS: 600001 (use milliseconds from 1 to 600000)',
    );
    expect(parseSettings({}, { LEDGE_NOTIFY_DEPRECATION_INTERVAL: '0' }).notifyDeprecationInterval).toBe(0);
    expect(parseSettings({ port: '65535' }, {}).port).toBe(65535);
    expect(failure({ port: '65536' })).toBe('invalid port: 65536 (use 0 to 65535), from --port');
    for (const raw of ['1.5', '-1', '1e3x', ' ', 'ten']) {
      expect(failure({}, { LEDGE_SUBREQUESTS_PER_INVOCATION: raw })).toBe(
        `invalid LEDGE_SUBREQUESTS_PER_INVOCATION: ${raw} (use 1 to 10000000)`,
      );
    }
  });

  it('names the flag or the variable a bad value came from, in one line', () => {
    const lines = [
      failure({ trafficPort: 'x' }),
      failure({}, { LEDGE_TRAFFIC_PORT: 'x' }),
      failure({}, { LEDGE_MAX_SCRIPTS_PER_ACCOUNT: '0' }),
      failure({}, { LEDGE_LOG_LEVEL: 'loud' }),
      failure({ logFormat: 'xml' }),
      failure({ s3ForcePathStyle: 'maybe' }),
      failure({}, { LEDGE_EGRESS_DENY: '10.0.0.0/8,bogus' }),
      failure({}, { LEDGE_R2_PUBLIC_DOMAIN: 'not a domain' }),
      failure({ s3Endpoint: 'localhost:9000' }),
      failure({}, { LEDGE_NODE_ID: 'node one' }),
      failure({}, { LEDGE_SECRET_KEY: 'c2hvcnQga2V5' }),
    ];
    expect(lines).toEqual([
      'invalid port: x (use 0 to 65535), from --traffic-port',
      'invalid port: x (use 0 to 65535), from LEDGE_TRAFFIC_PORT',
      'invalid LEDGE_MAX_SCRIPTS_PER_ACCOUNT: 0 (use 1 to 1000000)',
      'invalid log level: loud (use debug, info, warn, error or silent), from LEDGE_LOG_LEVEL',
      'invalid log format: xml (use text or json), from --log-format',
      'invalid --s3-force-path-style: maybe (use true or false)',
      'LEDGE_EGRESS_DENY: "bogus" is not a CIDR range (use e.g. 10.0.0.0/8 or fd00::/8)',
      'LEDGE_R2_PUBLIC_DOMAIN must be a hostname (like r2.localhost), not "not a domain"',
      'invalid --s3-endpoint localhost:9000: expected http(s)://host[:port]',
      'invalid LEDGE_NODE_ID: node one (use 1 to 64 letters, digits, dots, dashes or underscores)',
      // A secret is never repeated in the line.
      'invalid LEDGE_SECRET_KEY: (hidden) (use 32 bytes, base64)',
    ]);
  });

  it("declares the same defaults as the subsystems' own (used when a test builds one directly)", () => {
    const config = resolveServerConfig({}, {});
    expect(config.notifications).toMatchObject({
      retry: DEFAULT_RETRY,
      historyRetentionMs: DEFAULT_HISTORY_RETENTION_MS,
      deprecationIntervalMs: DEFAULT_DEPRECATION_INTERVAL_MS,
    });
    expect(config.workers).toMatchObject({
      maxScriptsPerAccount: MAX_SCRIPTS_PER_ACCOUNT,
      uploadLimit: WORKER_LIMITS.defaultUploadBytes,
    });
    expect(SETTINGS.scriptUploadLimit.kind.range).toContain(String(WORKER_LIMITS.maxUploadBytes));
  });

  it('hands each subsystem its typed part', () => {
    const config = resolveServerConfig(
      {},
      {
        LEDGE_NOTIFY_GIVE_UP_AFTER: '60',
        LEDGE_LB_MIN_INTERVAL: '1',
        LEDGE_LB_CONNECT_TIMEOUT_MS: '250',
        LEDGE_TAIL_SESSION_SECONDS: '30',
        LEDGE_HTTP_HEADERS_TIMEOUT_MS: '5000',
        LEDGE_HTTP_REQUEST_TIMEOUT_MS: '1000',
        LEDGE_CLUSTER_HEARTBEAT_MS: '500',
      },
    );
    expect(config.notifications.retry.giveUpAfterMs).toBe(60_000);
    expect(config.loadBalancing).toEqual({ minIntervalSeconds: 1 });
    expect(config.traffic).toMatchObject({ connectTimeoutMs: 250, responseTimeoutMs: 100_000 });
    expect(config.workers.tailSessionSeconds).toBe(30);
    // Node refuses a headers timeout above the request timeout.
    expect(config.httpTimeouts).toMatchObject({ headersMs: 1000, requestMs: 1000 });
    expect(config.cluster.heartbeatMs).toBe(500);
    expect(config).not.toHaveProperty('env');
  });
});

describe('ledge server and its settings', () => {
  it('stops with one line naming the setting and exit code 1 on a bad value, flag or variable', async () => {
    // Without --json: the line a person reads.
    const flags = serverFlags(tempDir()).filter((flag) => flag !== '--json');
    const fromEnv = await runCli(['server', ...flags], { env: { LEDGE_NOTIFY_LEASE_MS: '5' } });
    expect(fromEnv).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'error: invalid LEDGE_NOTIFY_LEASE_MS: 5 (use milliseconds from 1000 up)\n',
    });
    const fromFlag = await runCli(['server', ...flags, '--egress-allow', '10.0.0.1/8']);
    expect(fromFlag).toMatchObject({
      code: 1,
      stderr: 'error: --egress-allow: "10.0.0.1/8" has host bits set; did you mean 10.0.0.0/8?\n',
    });
  });

  it('lists every setting in --help: each flag, and each variable', async () => {
    const help = await runCli(['server', '--help']);
    expect(help.code).toBe(0);
    for (const [, setting] of declared) {
      if (setting.flag) expect(help.stdout).toContain(setting.flag);
      expect(help.stdout).toContain(setting.env);
    }
  });
});

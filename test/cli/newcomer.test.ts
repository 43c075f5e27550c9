import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';

/**
 * What a new user trips over with a server on ports of its own (all 0 here, so nothing is the default): the
 * CLI prints the URLs that really answer, and the real AWS CLI works with the settings it prints.
 */
const run = promisify(execFile);
/** Debian's AWS CLI (2.9 on Debian 12: it ignores `endpoint_url` in the config, hence the flag). */
const AWS = '/usr/bin/aws';

/** GET through the traffic port with the given Host, as a browser resolving the name to loopback would. */
function getByHost(port: number, host: string, path: string) {
  return new Promise<{ status: number; type: string | undefined; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a new user with a server on ports of its own', () => {
  let server: SpawnedLedge;
  let configDir: string;
  let work: string;
  const ledge = (args: string[]) =>
    runCli(args, {
      cwd: work,
      env: { LEDGE_CONFIG_DIR: configDir, LEDGE_API_TOKEN: TEST_CREDENTIALS.apiToken },
    });

  beforeAll(async () => {
    configDir = tempDir('ledge-cfg-');
    work = tempDir('ledge-work-');
    server = await spawnLedge(join(tempDir('ledge-srv-'), 'data'), ['--functions-processes', '1'], {
      LEDGE_CONFIG_DIR: configDir,
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe('ledge s3 credentials', () => {
    it("prints the running server's S3 endpoint, not the default port or a *.localhost name", async () => {
      const result = await ledge(['s3', 'credentials', '--json']);
      expect(result.code, result.stderr).toBe(0);
      const pair = JSON.parse(result.stdout);
      expect(pair.endpoint).toBe(`http://127.0.0.1:${server.info['s3_api_port']}`);
      expect(pair.endpoint_from_server).toBe(true);
      const text = await ledge(['s3', 'credentials']);
      expect(text.stdout).toContain(`Endpoint:          http://127.0.0.1:${server.info['s3_api_port']}\n`);
      expect(text.stdout).toContain(`--endpoint-url http://127.0.0.1:${server.info['s3_api_port']}`);
      expect(text.stdout).toContain(`AWS_ENDPOINT_URL=http://127.0.0.1:${server.info['s3_api_port']}`);
    });

    it.skipIf(!existsSync(AWS))(
      "works with Debian's AWS CLI as printed: the profile, then the environment",
      async () => {
        const text = (await ledge(['s3', 'credentials'])).stdout;
        // The profile as printed (indented by two): the credentials file's section, then the config's.
        const lines = text.split('\n').map((line) => line.slice(2));
        const section = (from: string, to: (line: string) => boolean) => {
          const start = lines.indexOf(from);
          const end = lines.findIndex((line, index) => index > start && to(line));
          return `${lines.slice(start, end).filter(Boolean).join('\n')}\n`;
        };
        const home = tempDir('aws-home-');
        mkdirSync(join(home, '.aws'));
        writeFileSync(
          join(home, '.aws/credentials'),
          section('[ledge]', (line) => line.startsWith('[')),
        );
        writeFileSync(
          join(home, '.aws/config'),
          section('[profile ledge]', (line) => line.startsWith('aws ')),
        );
        const base = { PATH: '/usr/bin:/bin', HOME: home, AWS_EC2_METADATA_DISABLED: 'true', AWS_PAGER: '' };
        const flag = ['--endpoint-url', `http://127.0.0.1:${server.info['s3_api_port']}`];
        expect(text).toContain(`aws --profile ledge ${flag.join(' ')} s3 ls`);
        await run(AWS, ['--profile', 'ledge', ...flag, 's3', 'mb', 's3://from-aws-profile'], { env: base });
        // The environment form, with no profile at all.
        const exports = Object.fromEntries(
          [...text.matchAll(/export (AWS_[A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!] as const),
        );
        expect(Object.keys(exports).sort()).toEqual([
          'AWS_ACCESS_KEY_ID',
          'AWS_DEFAULT_REGION',
          'AWS_SECRET_ACCESS_KEY',
        ]);
        const listed = await run(AWS, [...flag, 's3', 'ls'], {
          env: { ...base, HOME: tempDir('aws-empty-'), ...exports },
        });
        expect(listed.stdout).toContain('from-aws-profile');
      },
    );
  });

  describe('public buckets and object types', () => {
    it('object put sets Content-Type from the file name, --content-type wins; the printed public URL serves them', async () => {
      expect((await ledge(['bucket', 'create', 'site'])).code).toBe(0);
      const page = join(work, 'index.html');
      writeFileSync(page, '<h1>hi</h1>');
      const styles = join(work, 'styles.css');
      writeFileSync(styles, 'h1{}');
      expect((await ledge(['object', 'put', 'site/index.html', '--file', page])).code).toBe(0);
      expect((await ledge(['object', 'put', 'site/a.css', '--file', styles])).code).toBe(0);
      const forced = await ledge(['object', 'put', 'site/raw.html', '--file', page, '--content-type', 'text/plain']);
      expect(forced.code, forced.stderr).toBe(0);

      const trafficPort = Number(server.info['traffic_port']);
      // The HTTPS port of the same hostnames is named too (a free one here: the tests start on port 0).
      expect(server.info['traffic_tls_port']).toEqual(expect.any(Number));
      expect(server.info['traffic_tls_port']).not.toBe(trafficPort);
      const enabled = await ledge(['bucket', 'dev-url', 'enable', 'site']);
      expect(enabled.code, enabled.stderr).toBe(0);
      const url = new URL(/(http:\/\/\S+)/.exec(enabled.stdout)![1]!);
      expect(url.port).toBe(String(trafficPort));
      expect(url.hostname).toMatch(/^pub-[0-9a-f]{32}\.r2\.localhost$/);
      const html = await getByHost(trafficPort, url.host, '/index.html');
      expect(html).toMatchObject({ status: 200, body: '<h1>hi</h1>' });
      expect(html.type).toMatch(/^text\/html/);
      expect((await getByHost(trafficPort, url.host, '/a.css')).type).toMatch(/^text\/css/);
      expect((await getByHost(trafficPort, url.host, '/raw.html')).type).toBe('text/plain');

      const got = JSON.parse((await ledge(['bucket', 'dev-url', 'get', 'site', '--json'])).stdout);
      expect(got).toMatchObject({ enabled: true, url: url.href });
      expect((await ledge(['bucket', 'dev-url', 'disable', 'site'])).stdout).toContain('is off');
      expect((await getByHost(trafficPort, url.host, '/index.html')).status).toBe(404);
    });

    it('domain add / list / remove a custom domain in a zone, with its URL', async () => {
      expect((await ledge(['zones', 'create', 'example.test'])).code).toBe(0);
      const added = await ledge([
        'bucket',
        'domain',
        'add',
        'site',
        '--domain',
        'files.example.test',
        '--zone',
        'example.test',
      ]);
      expect(added.code, added.stderr).toBe(0);
      const trafficPort = Number(server.info['traffic_port']);
      const url = `http://files.example.test:${trafficPort}/`;
      expect(added.stdout).toContain(url);
      const list = await ledge(['bucket', 'domain', 'list', 'site']);
      expect(list.stdout).toContain(url);
      expect((await getByHost(trafficPort, 'files.example.test', '/index.html')).body).toBe('<h1>hi</h1>');
      const removed = await ledge(['bucket', 'domain', 'remove', 'site', '--domain', 'files.example.test']);
      expect(removed.code, removed.stderr).toBe(0);
      expect((await ledge(['bucket', 'domain', 'list', 'site'])).stdout).toContain('No custom domains.');
      expect((await getByHost(trafficPort, 'files.example.test', '/index.html')).status).toBe(404);
      const unknownZone = await ledge([
        'bucket',
        'domain',
        'add',
        'site',
        '--domain',
        'x.nope.test',
        '--zone',
        'nope.test',
      ]);
      expect(unknownZone.code).toBe(1);
      expect(unknownZone.stderr).toContain('no zone named "nope.test"');
    });
  });

  it('pools list has a health column (a pool without a monitor is unchecked)', async () => {
    const created = await ledge(['pools', 'create', 'web', '--origin', 'a=192.0.2.1']);
    expect(created.code, created.stderr).toBe(0);
    const list = await ledge(['pools', 'list']);
    expect(list.stdout.split('\n')[0]).toMatch(/Enabled\s+Health\s+Origins/);
    expect(list.stdout).toMatch(/web\s+\S+\s+yes\s+unchecked\s+1/);
  });
});

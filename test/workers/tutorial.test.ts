import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { callFunction, type FunctionResponse } from './helpers.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures/tutorial');
const SECRET = 'correct horse battery staple';
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

/**
 * The spec's tutorial, end to end, through the `ledge` CLI and the function code exactly as Cloudflare
 * publishes it: stage 1 (no authorization), then a secret and stage 2 (with authorization).
 */
describe('the R2 tutorial on Ledge', () => {
  let ledge: TestLedge;
  let project: string;
  let url: URL;
  const env = () => cliEnv(ledge);
  const cli = (args: string[], input?: string) =>
    runCli(args, { env: env(), cwd: project, ...(input === undefined ? {} : { input }) });
  const call = (
    method: string,
    key: string,
    init: { headers?: Record<string, string>; body?: string } = {},
  ): Promise<FunctionResponse> => callFunction(Number(url.port), url.hostname, `/${key}`, { method, ...init });
  const useStage = (file: string) => {
    copyFileSync(join(FIXTURES, file), join(project, 'src/index.js'));
  };

  beforeAll(async () => {
    ledge = await startLedge();
    project = join(tempDir('ledge-tutorial-'), 'r2-worker');
  });
  afterAll(async () => ledge?.close());

  it('creates the bucket, lists it, and shows the account', async () => {
    const created = await runCli(['bucket', 'create', 'my-bucket'], { env: env() });
    expect(created.code, created.stderr).toBe(0);
    const listed = await runCli(['bucket', 'list'], { env: env() });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('my-bucket');
    const whoami = await runCli(['whoami'], { env: env() });
    expect(whoami.stdout).toContain(ledge.accountId);
  });

  it('scaffolds the app with `ledge create app`', async () => {
    const created = await runCli(['create', 'app', project, '--bucket', 'my-bucket'], { env: env() });
    expect(created.code, created.stderr).toBe(0);
    const toml = readFileSync(join(project, 'wrangler.toml'), 'utf8');
    expect(toml).toContain('name = "r2-worker"');
    expect(toml).toContain(`account_id = "${ledge.accountId}"`);
    expect(toml).toContain('bucket_name = "my-bucket"');
    // The tutorial's own code, byte for byte, replaces the TypeScript version of the template.
    writeFileSync(join(project, 'wrangler.toml'), toml.replace('main = "src/index.ts"', 'main = "src/index.js"'));
  });

  it('stage 1: deploys the function without authorization and prints its URL', async () => {
    useStage('stage-1-no-authorization.js');
    const deployed = await cli(['deploy', '--json']);
    expect(deployed.code, deployed.stderr).toBe(0);
    url = new URL((JSON.parse(deployed.stdout) as { url: string }).url);
    expect(url.hostname).toMatch(/^r2-worker\.[a-z0-9-]+\.localhost$/);
  });

  it('stage 1: PUT stores the body and answers 200', async () => {
    const put = await call('PUT', 'cat-pic.jpg', { body: 'meow v1' });
    expect(put.status).toBe(200);
    expect(put.text).toBe('Put cat-pic.jpg successfully!');
    expect((await call('PUT', 'dog.txt', { body: 'woof' })).status).toBe(200);
  });

  it('stage 1: GET returns the bytes with etag = httpEtag (plain curl reaches it too)', async () => {
    const got = await call('GET', 'cat-pic.jpg');
    expect(got.status).toBe(200);
    expect(got.text).toBe('meow v1');
    expect(got.headers['etag']).toBe(`"${md5('meow v1')}"`);
    const { stdout } = await promisify(execFile)('curl', ['-s', '-i', url.href + 'cat-pic.jpg']);
    expect(stdout).toMatch(/^HTTP\/1\.1 200/);
    expect(stdout).toContain('meow v1');
  });

  it('stage 1: GET copies the stored HTTP metadata into the response headers', async () => {
    const put = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/my-bucket/objects/photo.jpg`, {
      method: 'PUT',
      headers: {
        ...ledge.tokenHeaders,
        'content-type': 'image/jpeg',
        'cache-control': 'max-age=60',
        'content-language': 'fr',
      },
      body: 'jpeg bytes',
    });
    expect(put.status).toBe(200);
    const got = await call('GET', 'photo.jpg');
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('image/jpeg');
    expect(got.headers['cache-control']).toBe('max-age=60');
    expect(got.headers['content-language']).toBe('fr');
    expect(got.headers['etag']).toBe(`"${md5('jpeg bytes')}"`);
  });

  it('stage 1: a missing key is 404 Object Not Found; DELETE answers Deleted!; other methods 405', async () => {
    const missing = await call('GET', 'nothing-here');
    expect([missing.status, missing.text]).toEqual([404, 'Object Not Found']);
    const deleted = await call('DELETE', 'photo.jpg');
    expect([deleted.status, deleted.text]).toEqual([200, 'Deleted!']);
    expect((await call('GET', 'photo.jpg')).status).toBe(404);
    const post = await call('POST', 'cat-pic.jpg', { body: 'x' });
    expect([post.status, post.text, post.headers['allow']]).toEqual([405, 'Method Not Allowed', 'PUT, GET, DELETE']);
  });

  it('stage 2: stores AUTH_KEY_SECRET and redeploys with authorization', async () => {
    const secret = await cli(['secret', 'put', 'AUTH_KEY_SECRET'], `${SECRET}\n`);
    expect(secret.code, secret.stderr).toBe(0);
    const listed = await cli(['secret', 'list']);
    expect(listed.stdout).toContain('AUTH_KEY_SECRET');
    expect(listed.stdout).not.toContain(SECRET);
    useStage('stage-2-with-authorization.js');
    const deployed = await cli(['deploy', '--json']);
    expect(deployed.code, deployed.stderr).toBe(0);
    expect(new URL((JSON.parse(deployed.stdout) as { url: string }).url).hostname).toBe(url.hostname);
  });

  it('stage 2: PUT and DELETE without the header or with a wrong one are 403 and change nothing', async () => {
    for (const headers of [{}, { 'X-Custom-Auth-Key': 'hotdog' }] as Record<string, string>[]) {
      const put = await call('PUT', 'cat-pic.jpg', { headers, body: 'evil' });
      expect([put.status, put.text]).toEqual([403, 'Forbidden']);
      const del = await call('DELETE', 'cat-pic.jpg', { headers });
      expect([del.status, del.text]).toEqual([403, 'Forbidden']);
    }
    expect((await call('GET', 'cat-pic.jpg')).text).toBe('meow v1');
  });

  it('stage 2: with the right header PUT succeeds and GET of the allowed key returns it', async () => {
    const put = await call('PUT', 'cat-pic.jpg', { headers: { 'X-Custom-Auth-Key': SECRET }, body: 'meow v2' });
    expect([put.status, put.text]).toEqual([200, 'Put cat-pic.jpg successfully!']);
    const got = await call('GET', 'cat-pic.jpg');
    expect([got.status, got.text, got.headers['etag']]).toEqual([200, 'meow v2', `"${md5('meow v2')}"`]);
  });

  it('stage 2: GET of any key outside the allow list is 403, even when it exists', async () => {
    const other = await call('GET', 'dog.txt');
    expect([other.status, other.text]).toEqual([403, 'Forbidden']);
    expect((await call('GET', 'nothing-here')).status).toBe(403);
  });

  it('stage 2: any other method is 403 (authorization runs first)', async () => {
    for (const method of ['POST', 'PATCH', 'HEAD']) {
      expect((await call(method, 'cat-pic.jpg', method === 'HEAD' ? {} : { body: 'x' })).status).toBe(403);
    }
  });

  it('stage 2: DELETE with the right header deletes', async () => {
    const del = await call('DELETE', 'cat-pic.jpg', { headers: { 'X-Custom-Auth-Key': SECRET } });
    expect([del.status, del.text]).toEqual([200, 'Deleted!']);
    expect((await call('GET', 'cat-pic.jpg')).status).toBe(404);
  });
});

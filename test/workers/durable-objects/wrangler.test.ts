import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../../helpers/ledge.ts';
import { waitFor } from '../../helpers/wait.ts';
import { runWrangler } from '../../helpers/wrangler.ts';
import { accountSubdomain, callFunction, functionsPort } from '../helpers.ts';
import { OBJECTS_WORKER } from './fixture.ts';

const CONFIG = (migrations: string) => `name = "chat"
main = "src/index.js"
compatibility_date = "2025-04-01"
workers_dev = true

[[durable_objects.bindings]]
name = "COUNTER"
class_name = "Counter"

[[durable_objects.bindings]]
name = "ROOM"
class_name = "Room"
${migrations}`;
const V1 = `
[[migrations]]
tag = "v1"
new_classes = ["Counter"]
new_sqlite_classes = ["Room"]
`;

/** The real wrangler 4 deploys a Worker with Durable Objects: migrations, redeploys and a server restart. */
describe('wrangler deploy with Durable Objects', () => {
  let ledge: TestLedge;
  let project: string;
  const deploy = async () => {
    const result = await runWrangler(['deploy'], {
      apiUrl: ledge.apiUrl,
      cwd: project,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 90_000,
    });
    return { ...result, output: result.stdout + result.stderr };
  };
  const call = async (path: string) =>
    (await callFunction(functionsPort(ledge), `chat.${await accountSubdomain(ledge)}.localhost`, path)).text;

  beforeAll(async () => {
    ledge = await startLedge({ dataDir: tempDir('ledge-do-data-') });
    project = tempDir('ledge-do-project-');
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/index.js'), OBJECTS_WORKER);
    writeFileSync(join(project, 'wrangler.toml'), CONFIG(V1));
  });
  afterAll(async () => ledge?.close());

  it('deploys the classes with their first migration', async () => {
    const result = await deploy();
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('env.COUNTER (Counter)');
    expect(await call('/counter/visits')).toBe('1');
    expect(await call('/room/lobby/add?text=first')).toBe('1');
  });

  it('redeploys (wrangler finds the tag and sends no migration) and the objects keep their state', async () => {
    writeFileSync(join(project, 'src/index.js'), `${OBJECTS_WORKER}\n// changed\n`);
    const result = await deploy();
    expect(result.code, result.output).toBe(0);
    expect(await call('/counter/visits')).toBe('2');
  });

  it('keeps state, and an alarm still to ring, across a server restart', async () => {
    // Rings 3 s after it is set: normally after the restart below, which must not lose it.
    expect(await call('/room/later/alarm?text=rang&in=3000')).toBe('scheduled');
    const { dataDir } = ledge;
    await ledge.close();
    ledge = await startLedge({ dataDir });
    expect(await call('/counter/visits')).toBe('3');
    expect(JSON.parse(await call('/room/lobby/messages'))).toEqual(['first']);
    await waitFor(
      async () => JSON.parse(await call('/room/later/messages')).includes('rang'),
      'the alarm after the restart',
    );
  });

  it('applies a later migration and refuses a config whose history was rewritten', async () => {
    writeFileSync(
      join(project, 'wrangler.toml'),
      CONFIG(`${V1}\n[[migrations]]\ntag = "v2"\nnew_sqlite_classes = ["Extra"]\n`),
    );
    writeFileSync(join(project, 'src/index.js'), `${OBJECTS_WORKER}\nexport class Extra extends DurableObject {}\n`);
    const applied = await deploy();
    expect(applied.code, applied.output).toBe(0);
    const service = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/services/chat`, {
      headers: ledge.tokenHeaders,
    });
    const body = (await service.json()) as { result: { default_environment: { script: { migration_tag: string } } } };
    expect(body.result.default_environment.script.migration_tag).toBe('v2');
    // A config whose migrations lost the deployed tag: wrangler replays all of them, and the API refuses.
    writeFileSync(join(project, 'wrangler.toml'), CONFIG(V1.replace('"v1"', '"v1-renamed"')));
    const refused = await deploy();
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain('[code: 10074]');
    expect(await call('/counter/visits')).toBe('4');
  });

  it("deploys a second Worker whose script_name bindings reach the first one's objects", async () => {
    const caller = tempDir('ledge-do-caller-');
    mkdirSync(join(caller, 'src'));
    writeFileSync(join(caller, 'src/index.js'), OBJECTS_WORKER);
    writeFileSync(
      join(caller, 'wrangler.toml'),
      CONFIG('')
        .replace('name = "chat"', 'name = "chat-front"')
        .replaceAll('class_name = "Counter"', 'class_name = "Counter"\nscript_name = "chat"')
        .replaceAll('class_name = "Room"', 'class_name = "Room"\nscript_name = "chat"'),
    );
    const result = await runWrangler(['deploy'], {
      apiUrl: ledge.apiUrl,
      cwd: caller,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 90_000,
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const front = `chat-front.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), front, '/counter/visits')).text).toBe('5');
    expect(JSON.parse((await callFunction(functionsPort(ledge), front, '/room/lobby/messages')).text)).toEqual([
      'first',
    ]);
  });
});

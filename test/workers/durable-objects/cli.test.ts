import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../../helpers/ledge.ts';
import { accountSubdomain, callFunction, functionsPort } from '../helpers.ts';
import { OBJECTS_WORKER } from './fixture.ts';

const CONFIG = `name = "counter"
main = "src/index.js"
compatibility_date = "2025-04-01"
workers_dev = true

[[durable_objects.bindings]]
name = "COUNTER"
class_name = "Counter"

[[durable_objects.bindings]]
name = "ROOM"
class_name = "Room"

[[migrations]]
tag = "v1"
new_classes = ["Counter"]
new_sqlite_classes = ["Room"]
`;

/** `ledge deploy` sends Durable Object bindings and the migrations after the Worker's tag, as wrangler does. */
describe('ledge deploy with Durable Objects', () => {
  let ledge: TestLedge;
  let project: string;
  const deploy = () => runCli(['deploy'], { env: cliEnv(ledge), cwd: project });
  const call = async (path: string) =>
    (await callFunction(functionsPort(ledge), `counter.${await accountSubdomain(ledge)}.localhost`, path)).text;

  beforeAll(async () => {
    ledge = await startLedge();
    project = tempDir('ledge-do-cli-');
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/index.js'), OBJECTS_WORKER);
    writeFileSync(join(project, 'wrangler.toml'), CONFIG);
  });
  afterAll(async () => ledge?.close());

  it('deploys, redeploys without replaying the migration, then applies a new one', async () => {
    const first = await deploy();
    expect(first.code, first.stderr).toBe(0);
    expect(await call('/counter/c')).toBe('1');
    const again = await deploy();
    expect(again.code, again.stderr).toBe(0);
    expect(await call('/counter/c')).toBe('2');
    writeFileSync(
      join(project, 'wrangler.toml'),
      CONFIG.replace('class_name = "Counter"', 'class_name = "Tally"') +
        `\n[[migrations]]\ntag = "v2"\nrenamed_classes = [{ from = "Counter", to = "Tally" }]\n`,
    );
    writeFileSync(join(project, 'src/index.js'), OBJECTS_WORKER.replace('export class Counter', 'export class Tally'));
    // Only v2 is sent: the Worker is at v1.
    const renamed = await deploy();
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(await call('/counter/c')).toBe('3');
  });
});

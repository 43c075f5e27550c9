/**
 * The main module of a script's Workflows engine: workerd's bundled `/workerd/workflows.js` as it is (its
 * `Engine` runs each instance as a Durable Object, its `WorkflowBinding` is what `env.MY_WORKFLOW` calls),
 * plus what the control plane needs and the engine does not keep:
 *
 * - an index of each Workflow's instances (`WorkflowIndex`, one object per Workflow): workerd finds an
 *   instance by its id only, and `wrangler workflows instances list` lists them. `Engine.create` records the
 *   id before the instance exists, so a crash between the two leaves an entry without instance, which
 *   listing drops, never an instance nobody can list;
 * - `ledgeDescribe()`: an instance's record and history as the engine stored them, for the API's describe;
 * - a small HTTP API (the default export) for the Ledge server, reached only through the process's private
 *   ping socket: list, create, describe, pause/resume/terminate/restart, send an event. Every call names a
 *   Workflow this engine runs (`WORKFLOW_NAMES`), so it reaches nothing else.
 */
export const WORKFLOWS_ENGINE_MODULE = `import { DurableObject, env } from 'cloudflare:workers';
import { Engine as BundledEngine, WorkflowBinding } from './workflows.js';
export { WorkflowBinding };

const index = (workflow) => env.INDEX.get(env.INDEX.idFromName(workflow));

export class Engine extends BundledEngine {
  async create(params, retention) {
    await index(this.ctx.props.workflowName).add(this.ctx.id.name, Date.now());
    return super.create(params, retention);
  }
  ledgeDescribe() {
    const kv = this.ctx.storage.kv;
    const meta = kv.get('meta');
    if (meta === undefined) return null;
    const history = [...kv.list({ prefix: 'l:' })].map(([, event]) => event);
    return { meta, history };
  }
}

export class WorkflowIndex extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS instances (id TEXT PRIMARY KEY, created INTEGER NOT NULL)');
  }
  add(id, created) {
    this.ctx.storage.sql.exec('INSERT OR IGNORE INTO instances VALUES (?, ?)', id, created);
  }
  remove(id) {
    this.ctx.storage.sql.exec('DELETE FROM instances WHERE id = ?', id);
  }
  page(offset, limit, descending) {
    const order = descending ? 'DESC' : 'ASC';
    return this.ctx.storage.sql
      .exec('SELECT id, created FROM instances ORDER BY created ' + order + ', id ' + order + ' LIMIT ? OFFSET ?', limit, offset)
      .toArray();
  }
  count() {
    return this.ctx.storage.sql.exec('SELECT COUNT(*) AS n FROM instances').one().n;
  }
}

const TERMINAL = new Set(['complete', 'errored', 'terminated']);
const FINAL = new Set(['workflow_completed', 'workflow_errored', 'workflow_terminated']);
const json = (body, status = 200) => Response.json(body, { status });
// The engine's errors read "(code) message" (workflows.js workflowError); others are passed on as they are.
function failure(error) {
  const message = String(error?.message ?? error);
  const coded = /\\((instance\\.[a-z_]+|body)\\) (.*)$/s.exec(message);
  if (coded) return json({ error: { code: coded[1], message: coded[2] } }, 400);
  if (message.includes('instance.not_found')) {
    return json({ error: { code: 'instance.not_found', message: 'Instance does not exist' } }, 400);
  }
  return json({ error: { code: 'engine', message: message.replace(/^[A-Za-z]*Error: /, '') } }, 400);
}

// One instance's line of a list: its status and times from its own record, or null once it is gone.
async function summary(workflow, id) {
  const described = await env['workflow:' + workflow].getByName(id).ledgeDescribe();
  if (described === null) return null;
  const { meta, history } = described;
  const started = history.find((e) => e.type === 'workflow_started');
  const ended = TERMINAL.has(meta.status) ? history.findLast((e) => FINAL.has(e.type)) : undefined;
  const last = history.at(-1);
  return {
    id,
    status: meta.status,
    created: meta.created,
    started: started?.timestamp ?? null,
    ended: ended?.timestamp ?? null,
    modified: last?.timestamp ?? meta.created,
  };
}

async function list(workflow, q) {
  const offset = Number(q.get('offset') ?? 0);
  const limit = Number(q.get('limit') ?? 50);
  const status = q.get('status');
  const descending = q.get('direction') !== 'asc';
  const idx = index(workflow);
  const out = [];
  let total = 0;
  // With a status filter every instance is looked at (the index keeps ids only); without, one page.
  const rows = status ? await idx.page(0, 1e9, descending) : await idx.page(offset, limit, descending);
  for (const row of rows) {
    const line = await summary(workflow, row.id);
    if (line === null) {
      await idx.remove(row.id);
      continue;
    }
    if (status && line.status !== status) continue;
    total++;
    out.push(line);
  }
  if (status) return { total, instances: out.slice(offset, offset + limit) };
  return { total: await idx.count(), instances: out };
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const q = url.searchParams;
    const workflow = q.get('workflow') ?? '';
    if (!env.WORKFLOW_NAMES.includes(workflow)) {
      return json({ error: { code: 'workflow.not_found', message: 'Workflow not found' } }, 404);
    }
    const binding = env['binding:' + workflow];
    const id = q.get('id') ?? '';
    try {
      switch (url.pathname) {
        case '/instances':
          return json(await list(workflow, q));
        case '/create': {
          const body = await request.json();
          const created = await binding.create(body);
          return json({ id: created.id, status: (await binding.status(created.id)).status });
        }
        case '/batch': {
          const body = await request.json();
          return json(await binding.createBatch(body));
        }
        case '/describe': {
          await binding.status(id);
          return json(await env['workflow:' + workflow].getByName(id).ledgeDescribe());
        }
        case '/action': {
          const action = q.get('action');
          if (action === 'pause') await binding.pause(id);
          else if (action === 'resume') await binding.resume(id);
          else if (action === 'terminate') await binding.terminate(id);
          else if (action === 'restart') await binding.restart(id);
          else return json({ error: { code: 'body', message: 'Unknown action' } }, 400);
          return json({ status: (await binding.status(id)).status });
        }
        case '/event': {
          const payload = await request.json();
          await binding.sendEvent(id, { type: q.get('type') ?? '', payload });
          return json({ ok: true });
        }
        case '/delete': {
          await binding.deleteInstance(id);
          await index(workflow).remove(id);
          return json({ ok: true });
        }
        default:
          return json({ error: { code: 'not_found', message: 'Not found' } }, 404);
      }
    } catch (error) {
      return failure(error);
    }
  },
};
`;

import { Hono } from 'hono';
import { readBodyBytes, readJson } from '../api-kit/body.ts';
import type { ApiContext, AppEnv } from '../api-kit/context.ts';
import { pageInfo, parsePagination } from '../api-kit/pagination.ts';
import { ok } from '../api-kit/respond.ts';
import { WORKFLOWS_VALIDATION_CODE, WorkflowErrors } from './errors.ts';
import { renderInstance, renderInstanceListed, renderVersion, renderWorkflow, renderWorkflowUpdate } from './render.ts';
import {
  INSTANCE_STATUSES,
  InstanceBatchSchema,
  InstanceCreateSchema,
  StatusEditSchema,
  WorkflowPutSchema,
} from './schemas.ts';
import type { WorkflowService } from './service.ts';

const BASE = '/accounts/:account_id/workflows';
const PAGING = { defaultPerPage: 50, maxPerPage: 100, code: WORKFLOWS_VALIDATION_CODE } as const;
/** An event's payload is at most 1 MiB as JSON (service.ts); the body may carry a little more whitespace. */
const EVENT_BODY_LIMIT = 2 * 1024 * 1024;
const INSTANCE_PAGING = { defaultPerPage: 50, maxPerPage: 100, code: WORKFLOWS_VALIDATION_CODE } as const;

/**
 * `/accounts/{a}/workflows`: the routes `wrangler deploy` and `wrangler workflows ...` use, as the official
 * SDK types them: the Workflow's record (PUT on deploy, get, list, delete, versions) and its instances (list,
 * create, batch, describe, status, events).
 */
export function workflowRoutes(workflows: WorkflowService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const find = (c: { req: { param(name: string): string } }) =>
    workflows.require(c.req.param('account_id'), c.req.param('workflow_name'));

  app.get(BASE, async (c) => {
    const page = parsePagination(c.req.query(), PAGING);
    const { workflows: records, total } = await workflows.list(c.req.param('account_id'), {
      search: c.req.query('search') || undefined,
      offset: page.offset,
      limit: page.limit,
    });
    const rendered = await Promise.all(
      records.map(async (r) => renderWorkflow(r, await workflows.counts(r), await workflows.scriptDeleted(r))),
    );
    return ok(c, rendered, { resultInfo: pageInfo(page, records.length, total) });
  });

  app.put(`${BASE}/:workflow_name`, async (c) => {
    const body = await readJson(c, WorkflowPutSchema, { code: WORKFLOWS_VALIDATION_CODE });
    const record = await workflows.put(c.req.param('account_id'), c.req.param('workflow_name'), body);
    return ok(c, renderWorkflowUpdate(record));
  });

  app.get(`${BASE}/:workflow_name`, async (c) => {
    const record = await find(c);
    return ok(c, renderWorkflow(record, await workflows.counts(record), await workflows.scriptDeleted(record)));
  });

  app.delete(`${BASE}/:workflow_name`, async (c) => {
    await workflows.delete(c.req.param('account_id'), c.req.param('workflow_name'));
    return ok(c, { status: 'ok', success: true });
  });

  app.get(`${BASE}/:workflow_name/versions`, async (c) => {
    const record = await find(c);
    const page = parsePagination(c.req.query(), PAGING);
    const versions = page.offset === 0 ? [renderVersion(record)] : [];
    return ok(c, versions, { resultInfo: pageInfo(page, versions.length, 1) });
  });

  app.get(`${BASE}/:workflow_name/versions/:version_id`, async (c) => {
    const record = await find(c);
    if (c.req.param('version_id') !== record.id) throw WorkflowErrors.validation('No such version of this Workflow.');
    return ok(c, renderVersion(record));
  });

  const list = async (c: ApiContext) => {
    const record = await find(c);
    const query = c.req.query();
    // wrangler pages on with `cursor` (the offset this answer hands out), the SDK with page/per_page.
    const { cursor, ...rest } = query;
    const page = parsePagination(rest, INSTANCE_PAGING);
    const offset = cursor !== undefined && /^\d+$/.test(cursor) ? Number(cursor) : page.offset;
    const status = query['status'];
    if (status !== undefined && !(INSTANCE_STATUSES as readonly string[]).includes(status)) {
      throw WorkflowErrors.validation(`status must be one of ${INSTANCE_STATUSES.join(', ')}`);
    }
    const direction = query['direction'] === 'asc' ? 'asc' : 'desc';
    const { total, instances } = await workflows.instances(record, { offset, limit: page.limit, status, direction });
    const next = offset + instances.length;
    return ok(
      c,
      instances.map((line) => renderInstanceListed(line, record)),
      {
        resultInfo: {
          ...pageInfo(page, instances.length, total),
          ...(next < total ? { cursor: String(next) } : {}),
        },
      },
    );
  };
  app.get(`${BASE}/:workflow_name/instances`, list);
  // wrangler's `latest` asks with a trailing slash.
  app.get(`${BASE}/:workflow_name/instances/`, list);

  app.post(`${BASE}/:workflow_name/instances`, async (c) => {
    const record = await find(c);
    const body = await readJson(c, InstanceCreateSchema, { code: WORKFLOWS_VALIDATION_CODE, emptyAs: {} });
    const created = await workflows.create(record, body);
    return ok(c, { id: created.id, status: created.status, version_id: record.id, workflow_id: record.id });
  });

  app.post(`${BASE}/:workflow_name/instances/batch`, async (c) => {
    const record = await find(c);
    const body = await readJson(c, InstanceBatchSchema, { code: WORKFLOWS_VALIDATION_CODE });
    const created = await workflows.createBatch(record, body);
    return ok(
      c,
      created.map((i) => ({ id: i.id, status: i.status, version_id: record.id, workflow_id: record.id })),
    );
  });

  app.get(`${BASE}/:workflow_name/instances/:instance_id`, async (c) => {
    const record = await find(c);
    const described = await workflows.describe(record, c.req.param('instance_id'));
    return ok(c, renderInstance(described, record));
  });

  app.patch(`${BASE}/:workflow_name/instances/:instance_id/status`, async (c) => {
    const record = await find(c);
    const body = await readJson(c, StatusEditSchema, { code: WORKFLOWS_VALIDATION_CODE });
    return ok(c, await workflows.action(record, c.req.param('instance_id'), body.status));
  });

  app.post(`${BASE}/:workflow_name/instances/:instance_id/events/:event_type`, async (c) => {
    const record = await find(c);
    const text = new TextDecoder().decode(await readBodyBytes(c, EVENT_BODY_LIMIT));
    let payload: unknown = null;
    if (text.trim() !== '') {
      try {
        payload = JSON.parse(text);
      } catch {
        throw WorkflowErrors.validation('The event payload must be JSON.');
      }
    }
    const id = c.req.param('instance_id');
    const timestamp = await workflows.sendEvent(record, id, c.req.param('event_type'), payload);
    return ok(c, { instanceId: id, timestamp });
  });

  return app;
}

import { Hono } from 'hono';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { pageInfo, parsePagination } from '../api-kit/pagination.ts';
import { ok } from '../api-kit/respond.ts';
import { QUEUES_VALIDATION_CODE } from './errors.ts';
import { renderConsumer, renderQueue } from './render.ts';
import { ConsumerBodySchema, QueueCreateSchema, QueueUpdateSchema, type QueueRecord } from './schemas.ts';
import type { QueueService } from './service.ts';

const BASE = '/accounts/:account_id/queues';
const PAGING = { defaultPerPage: 100, maxPerPage: 1000, code: QUEUES_VALIDATION_CODE } as const;
const BODY = { code: QUEUES_VALIDATION_CODE };

/** `/accounts/{a}/queues`: queues (create, list, get, update, edit, delete) and their consumers. */
export function queueRoutes(queues: QueueService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  /** A queue with its consumers and producers, as every answer gives it. */
  const full = async (queue: QueueRecord) =>
    renderQueue(
      queue,
      await queues.consumers(queue.account_id, queue.queue_id),
      (await queues.producers(queue.account_id)).get(queue.queue_id) ?? [],
    );

  app.post(BASE, async (c) => {
    const body = await readJson(c, QueueCreateSchema, BODY);
    return ok(c, await full(await queues.create(c.req.param('account_id'), body)));
  });

  app.get(BASE, async (c) => {
    const accountId = c.req.param('account_id');
    const page = parsePagination(c.req.query(), PAGING);
    // wrangler asks for its queues by name, one `name` each.
    const all = await queues.list(accountId, c.req.queries('name') ?? []);
    const consumers = await queues.consumers(accountId);
    const producers = await queues.producers(accountId);
    const shown = all.slice(page.offset, page.offset + page.limit).map((queue) =>
      renderQueue(
        queue,
        consumers.filter((consumer) => consumer.queue_id === queue.queue_id),
        producers.get(queue.queue_id) ?? [],
      ),
    );
    return ok(c, shown, { resultInfo: pageInfo(page, shown.length, all.length) });
  });

  app.get(`${BASE}/:queue_id`, async (c) =>
    ok(c, await full(await queues.require(c.req.param('account_id'), c.req.param('queue_id')))),
  );

  for (const method of ['put', 'patch'] as const) {
    app[method](`${BASE}/:queue_id`, async (c) => {
      const body = await readJson(c, QueueUpdateSchema, { ...BODY, emptyAs: {} });
      return ok(c, await full(await queues.update(c.req.param('account_id'), c.req.param('queue_id'), body)));
    });
  }

  app.delete(`${BASE}/:queue_id`, async (c) => {
    await queues.delete(c.req.param('account_id'), c.req.param('queue_id'));
    return ok(c, null);
  });

  app.get(`${BASE}/:queue_id/metrics`, async (c) => {
    const queue = await queues.require(c.req.param('account_id'), c.req.param('queue_id'));
    const metrics = await queues.metrics(queue);
    return ok(c, {
      backlog_count: metrics.backlogCount,
      backlog_bytes: metrics.backlogBytes,
      oldest_message_timestamp_ms: metrics.oldestMessageTimestamp,
    });
  });

  app.post(`${BASE}/:queue_id/consumers`, async (c) => {
    const accountId = c.req.param('account_id');
    const queue = await queues.require(accountId, c.req.param('queue_id'));
    const body = await readJson(c, ConsumerBodySchema, BODY);
    return ok(c, renderConsumer(await queues.addConsumer(accountId, queue.queue_id, body), queue.queue_name));
  });

  app.get(`${BASE}/:queue_id/consumers`, async (c) => {
    const accountId = c.req.param('account_id');
    const queue = await queues.require(accountId, c.req.param('queue_id'));
    const consumers = await queues.consumers(accountId, queue.queue_id);
    return ok(
      c,
      consumers.map((consumer) => renderConsumer(consumer, queue.queue_name)),
    );
  });

  app.get(`${BASE}/:queue_id/consumers/:consumer_id`, async (c) => {
    const accountId = c.req.param('account_id');
    const queue = await queues.require(accountId, c.req.param('queue_id'));
    const consumer = await queues.requireConsumer(accountId, queue.queue_id, c.req.param('consumer_id'));
    return ok(c, renderConsumer(consumer, queue.queue_name));
  });

  app.put(`${BASE}/:queue_id/consumers/:consumer_id`, async (c) => {
    const accountId = c.req.param('account_id');
    const queue = await queues.require(accountId, c.req.param('queue_id'));
    const body = await readJson(c, ConsumerBodySchema, BODY);
    const consumer = await queues.updateConsumer(accountId, queue.queue_id, c.req.param('consumer_id'), body);
    return ok(c, renderConsumer(consumer, queue.queue_name));
  });

  app.delete(`${BASE}/:queue_id/consumers/:consumer_id`, async (c) => {
    await queues.removeConsumer(c.req.param('account_id'), c.req.param('queue_id'), c.req.param('consumer_id'));
    return ok(c, null);
  });

  return app;
}

import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { limitedBody, readJson } from '../api-kit/body.ts';
import type { AppEnv, ApiApp } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { LedgeError } from '../shared/errors.ts';
import { D1_VALIDATION_CODE, D1Errors } from './errors.ts';
import { ExportBodySchema, ImportBodySchema } from './schemas.ts';
import type { D1Service } from './service.ts';
import type { D1Transfers } from './transfers.ts';

const BASE = '/accounts/:account_id/d1/database/:database_id';

/** `import` and `export` (behind the API's authentication). */
export function d1TransferRoutes(d1: D1Service, transfers: D1Transfers): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post(`${BASE}/import`, async (c) => {
    const database = await d1.require(c.req.param('account_id'), c.req.param('database_id'));
    const body = await readJson(c, ImportBodySchema, { code: D1_VALIDATION_CODE });
    const origin = new URL(c.req.url).origin;
    if (body.action === 'init') return ok(c, await transfers.initImport(database, body.etag, origin));
    if (body.action === 'ingest') return ok(c, await transfers.ingest(database, body.filename, body.etag));
    return ok(c, transfers.poll(database));
  });

  app.post(`${BASE}/export`, async (c) => {
    const database = await d1.require(c.req.param('account_id'), c.req.param('database_id'));
    const body = await readJson(c, ExportBodySchema, { code: D1_VALIDATION_CODE });
    const options = body.dump_options ?? {};
    const answer = await transfers.exportDatabase(
      database,
      { noSchema: options.no_schema ?? false, noData: options.no_data ?? false, tables: options.tables ?? [] },
      new URL(c.req.url).origin,
    );
    return ok(c, answer);
  });

  return app;
}

/**
 * The URLs an import uploads to and an export downloads from: each an unguessable token of one database,
 * valid for an hour, which stands for the credentials (wrangler sends none there, as to Cloudflare's).
 */
export function mountD1TokenRoutes(api: ApiApp, transfers: D1Transfers): void {
  api.put('/d1/uploads/:token', async (c) => {
    const tooLarge = () =>
      new LedgeError(
        413,
        D1_VALIDATION_CODE,
        `The file is larger than the import limit of ${transfers.importMaxBytes} bytes.`,
      );
    const etag = await transfers.receive(c.req.param('token'), limitedBody(c, transfers.importMaxBytes, tooLarge));
    c.header('ETag', `"${etag}"`);
    return c.body(null, 200);
  });

  api.get('/d1/exports/:token', async (c) => {
    const file = await transfers.download(c.req.param('token'));
    if (!file) throw D1Errors.exportNotFound();
    c.header('Content-Type', 'application/sql');
    c.header('Content-Length', String(file.size));
    c.header('Content-Disposition', `attachment; filename="${file.filename}"`);
    return stream(c, async (out) => {
      for await (const chunk of file.stream) await out.write(chunk as Uint8Array);
    });
  });
}

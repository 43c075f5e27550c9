import { Hono } from 'hono';
import { readJson } from '../../api-kit/body.ts';
import type { AppEnv } from '../../api-kit/context.ts';
import { ok } from '../../api-kit/respond.ts';
import type { PublicAccessService } from './access-service.ts';
import { CustomCreateSchema, CustomUpdateSchema, ManagedUpdateSchema } from './domain-schemas.ts';

const VALIDATION_CODE = 10040;

/**
 * `/accounts/{a}/r2/buckets/{b}/domains/managed` (the public URL switch) and `.../domains/custom[/{domain}]`
 * (custom domains), as the SDK's r2.buckets.domains and `wrangler r2 bucket dev-url|domain` call them.
 */
export function domainRoutes(access: PublicAccessService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const base = '/accounts/:account_id/r2/buckets/:bucket_name/domains';

  app.get(`${base}/managed`, async (c) =>
    ok(c, await access.managed(c.req.param('account_id'), c.req.param('bucket_name'))),
  );

  app.put(`${base}/managed`, async (c) => {
    const body = await readJson(c, ManagedUpdateSchema, { code: VALIDATION_CODE });
    return ok(c, await access.setManaged(c.req.param('account_id'), c.req.param('bucket_name'), body.enabled));
  });

  app.get(`${base}/custom`, async (c) =>
    ok(c, await access.listCustom(c.get('principal'), c.req.param('account_id'), c.req.param('bucket_name'))),
  );

  app.post(`${base}/custom`, async (c) => {
    const body = await readJson(c, CustomCreateSchema, { code: VALIDATION_CODE });
    const created = await access.createCustom(
      c.get('principal'),
      c.req.param('account_id'),
      c.req.param('bucket_name'),
      body,
    );
    return ok(c, created);
  });

  app.get(`${base}/custom/:domain`, async (c) => {
    const { account_id, bucket_name, domain } = c.req.param();
    return ok(c, await access.getCustom(c.get('principal'), account_id, bucket_name, domain));
  });

  app.put(`${base}/custom/:domain`, async (c) => {
    const body = await readJson(c, CustomUpdateSchema, { code: VALIDATION_CODE });
    const { account_id, bucket_name, domain } = c.req.param();
    return ok(c, await access.updateCustom(account_id, bucket_name, domain, body));
  });

  app.delete(`${base}/custom/:domain`, async (c) => {
    const { account_id, bucket_name, domain } = c.req.param();
    return ok(c, await access.deleteCustom(account_id, bucket_name, domain));
  });

  return app;
}

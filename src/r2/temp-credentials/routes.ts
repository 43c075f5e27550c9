import { Hono } from 'hono';
import { readJson } from '../../api-kit/body.ts';
import type { AppEnv } from '../../api-kit/context.ts';
import { ok } from '../../api-kit/respond.ts';
import { TempCredentialsRequestSchema } from './schemas.ts';
import type { TemporaryCredentialService } from './service.ts';

const VALIDATION_CODE = 10040;

/** `POST /accounts/{a}/r2/temp-access-credentials`: scoped, expiring S3 credentials from one of the caller's tokens. */
export function tempCredentialRoutes(service: TemporaryCredentialService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post('/accounts/:account_id/r2/temp-access-credentials', async (c) => {
    const body = await readJson(c, TempCredentialsRequestSchema, { code: VALIDATION_CODE });
    const credentials = await service.mint(c.get('principal'), c.req.param('account_id'), body);
    return ok(c, credentials);
  });
  return app;
}

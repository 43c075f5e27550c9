import type { Hono } from 'hono';
import type { ApiContext, AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { WorkerErrors } from './errors.ts';

/** What the session endpoints hand out: it opens nothing, the upload that follows is refused. */
const NO_PREVIEW_SESSION = { token: 'ledge-has-no-remote-preview' };

/**
 * `wrangler dev --remote` first asks for a preview session, then uploads the Worker to
 * `POST .../scripts/{script}/edge-preview`. Ledge has no preview edge, so the upload is refused with 501
 * and a message naming `ledge deploy`. The session request is answered (with a token that opens nothing)
 * because wrangler prints only a generic "request failed" line when the session itself fails, and the
 * API's message, with its pointer, when the upload does. The script need not exist: a remote preview
 * usually comes before the first deploy.
 */
export function mountPreviewRoutes(app: Hono<AppEnv>): void {
  const session = (c: ApiContext) => ok(c, NO_PREVIEW_SESSION);
  app.get('/accounts/:account_id/workers/subdomain/edge-preview', session);
  app.get('/accounts/:account_id/workers/scripts/:script/subdomain/edge-preview', session);
  app.get('/zones/:zone_id/workers/edge-preview', session);
  app.post('/accounts/:account_id/workers/scripts/:script/edge-preview', () => {
    throw WorkerErrors.remotePreviewUnsupported();
  });
}

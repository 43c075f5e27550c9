import type { Hono } from 'hono';
import { limitedRequest, readJson } from '../../api-kit/body.ts';
import type { ApiContext, AppEnv } from '../../api-kit/context.ts';
import { ok } from '../../api-kit/respond.ts';
import { LedgeError } from '../../shared/errors.ts';
import { readForm } from '../upload.ts';
import { SCRIPT_NAME } from '../schemas.ts';
import { WorkerErrors } from '../errors.ts';
import { AssetTokenErrors } from './tokens.ts';
import { UploadSessionSchema } from './schemas.ts';
import { UPLOAD_REQUEST_LIMIT, type AssetsService } from './service.ts';
import type { WorkersService } from '../service.ts';

const CODE = 10021;
/** A manifest of 100,000 files with long paths. */
const MANIFEST_LIMIT = 64 * 1024 * 1024;

/** `POST .../scripts/{script}/assets-upload-session`: the manifest in, the files still missing out. */
export function mountAssetSessionRoutes(app: Hono<AppEnv>, assets: AssetsService): void {
  app.post('/accounts/:account_id/workers/scripts/:script/assets-upload-session', async (c) => {
    const script = c.req.param('script');
    if (!SCRIPT_NAME.test(script)) throw WorkerErrors.invalidScriptName(script);
    const body = await readJson(c, UploadSessionSchema, { code: CODE, limit: MANIFEST_LIMIT });
    return ok(c, await assets.startSession(c.req.param('account_id'), script, body.manifest));
  });
}

/**
 * Ledge's own: the current version's assets at a glance (the dashboard's worker page): how many files, their
 * bytes, and how they are served. A script without assets answers `null`.
 */
export function mountAssetSummaryRoute(app: Hono<AppEnv>, workers: WorkersService): void {
  app.get('/accounts/:account_id/workers/scripts/:script/assets', async (c) => {
    const script = await workers.requireScript(c.req.param('account_id'), c.req.param('script'));
    const assets = (await workers.currentVersion(script))?.assets;
    if (!assets) return ok(c, null);
    const entries = Object.values(assets.manifest);
    const { _headers, _redirects, ...config } = assets.config;
    return ok(c, {
      files: entries.length,
      total_bytes: entries.reduce((sum, e) => sum + e.size, 0),
      binding: assets.binding ?? null,
      config: { ...config, has_headers: _headers !== undefined, has_redirects: _redirects !== undefined },
    });
  });
}

/**
 * `POST .../workers/assets/upload`: authenticated by the session's token (Bearer), not an API token, as on
 * Cloudflare; mounted before the API's authentication. 202 until the session's last file, then 201 with
 * the completion token.
 */
export function mountAssetUploadRoute(app: Hono<AppEnv>, assets: AssetsService): void {
  app.post('/accounts/:account_id/workers/assets/upload', async (c: ApiContext) => {
    const authorization = c.req.header('authorization') ?? '';
    const token = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
    if (!token) throw AssetTokenErrors.invalid();
    const base64 = c.req.query('base64') === 'true';
    const form = await readForm(
      limitedRequest(
        c,
        UPLOAD_REQUEST_LIMIT,
        () => new LedgeError(413, CODE, `An assets upload request may carry at most ${UPLOAD_REQUEST_LIMIT} bytes.`),
      ),
    );
    const result = await assets.upload(c.req.param('account_id')!, token, form, base64);
    return ok(c, result, { status: result.jwt ? 201 : 202 });
  });
}

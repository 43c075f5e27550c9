import { Hono } from 'hono';
import { limitedRequest, readJson } from '../api-kit/body.ts';
import type { ApiContext, AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { WorkerErrors } from './errors.ts';
import { normalizeAnnotations, WORKER_LIMITS } from './limits.ts';
import { renderBindings, renderDeployment, renderScript, renderVersion } from './render.ts';
import {
  AccountSubdomainSchema,
  DeploymentCreateSchema,
  ScriptSettingsPatchSchema,
  ScriptSubdomainSchema,
  SecretPutSchema,
  SecretsBulkSchema,
} from './schemas.ts';
import { parseSettingsPatch } from './settings-patch.ts';
import type { FunctionLogHub } from '../workerd/index.ts';
import type { WorkersService } from './service.ts';
import { mountPreviewRoutes } from './preview-route.ts';
import { mountDeleteRoutes } from './delete-routes.ts';
import { mountDurableObjectRoutes } from './durable-objects/routes.ts';
import { mountTailRoute, mountTailSessionRoutes } from './tail-route.ts';
import type { TailSessions } from './tail/sessions.ts';
import { mountCronRoutes } from './crons/cron-routes.ts';
import type { CronService } from './crons/cron-service.ts';
import { parseScriptUpload } from './upload.ts';
import { mountRequestHistoryRoute, type RequestHistory } from './request-history.ts';

const CODE = 10021;

/** `/accounts/{account_id}/workers/...`: what `wrangler deploy`, `wrangler secret` and `ledge` call. */
export function workerRoutes(
  workers: WorkersService,
  logs: FunctionLogHub,
  options: { uploadLimit?: number; crons?: CronService; tails: TailSessions; requestHistory?: RequestHistory },
): Hono<AppEnv> {
  const uploadLimit = options.uploadLimit ?? WORKER_LIMITS.defaultUploadBytes;
  const app = new Hono<AppEnv>();
  mountTailSessionRoutes(app, workers, options.tails);
  mountTailRoute(app, workers, logs);
  mountPreviewRoutes(app);
  mountDeleteRoutes(app, workers);
  mountDurableObjectRoutes(app, workers.durableObjects);
  if (options.crons) mountCronRoutes(app, options.crons);
  if (options.requestHistory) mountRequestHistoryRoute(app, workers, options.requestHistory);
  const base = '/accounts/:account_id/workers';
  const account = (c: ApiContext) => c.req.param('account_id')!;
  const script = (c: ApiContext) => c.req.param('script')!;
  const caller = (c: ApiContext) => ({
    email: c.get('principal').email,
    source: /wrangler/i.test(c.req.header('user-agent') ?? '') ? 'wrangler' : 'api',
  });
  // The multipart parser buffers what it reads: the cap applies while the body streams in.
  const upload = (c: ApiContext) =>
    parseScriptUpload(
      limitedRequest(c, uploadLimit, () => WorkerErrors.uploadTooLarge(uploadLimit)),
      workers.today(),
    );

  // Ledge's own: whether each deployed script runs on this node, or why not (a script that cannot start
  // is quarantined, and its host answers 503 with error 1101). `ledge scripts` shows it.
  app.get(`${base}/runtime/scripts`, async (c) => ok(c, await workers.runtimeStatus(account(c))));

  app.get(`${base}/scripts`, async (c) => {
    const scripts = await workers.store.listScripts(account(c));
    const rendered = await Promise.all(
      scripts.map(async (s) => renderScript(s, await workers.currentVersion(s), s.current_deployment_id)),
    );
    return ok(c, rendered);
  });

  app.put(`${base}/scripts/:script`, async (c) => {
    const parsed = await upload(c);
    const { script: saved, version, deployment } = await workers.upload(account(c), script(c), parsed, caller(c), true);
    return ok(c, { ...renderScript(saved, version, deployment?.id ?? null), startup_time_ms: 0 });
  });

  app.get(`${base}/scripts/:script`, async (c) => {
    const found = await workers.requireScript(account(c), script(c));
    const version = await workers.currentVersion(found);
    const main = version?.modules.find((m) => m.name === version.main_module);
    if (!main) throw WorkerErrors.scriptNotFound();
    return new Response(Buffer.from(main.content, 'base64'), {
      headers: { 'content-type': 'application/javascript+module' },
    });
  });

  app.get(`${base}/services/:script`, async (c) => {
    const found = await workers.store.getScript(account(c), script(c));
    if (!found) throw WorkerErrors.serviceNotFound();
    const version = await workers.currentVersion(found);
    const environment = {
      environment: 'production',
      created_on: found.created_on,
      modified_on: found.modified_on,
      script: renderScript(found, version, found.current_deployment_id),
    };
    return ok(c, {
      id: found.name,
      created_on: found.created_on,
      modified_on: found.modified_on,
      default_environment: environment,
    });
  });

  // The newer "Workers" resource: wrangler 4.1xx reads the workers.dev state of a script from here.
  app.get(`${base}/workers/:script`, async (c) => {
    const found = await workers.requireScript(account(c), script(c));
    const s = found.settings;
    return ok(c, {
      id: found.name,
      name: found.name,
      created_on: found.created_on,
      updated_on: found.modified_on,
      logpush: s.logpush ?? false,
      observability: s.observability ?? { enabled: false },
      tags: s.tags ?? [],
      tail_consumers: s.tail_consumers ?? [],
      subdomain: await scriptSubdomain(c),
      // What refers to this Worker. Ledge has no custom domains, Durable Objects, queues, dispatch namespaces or
      // service bindings, so nothing can: empty lists, which the SDK requires.
      references: { dispatch_namespace_outbounds: [], domains: [], durable_objects: [], queues: [], workers: [] },
    });
  });

  app.post(`${base}/scripts/:script/versions`, async (c) => {
    await workers.requireScript(account(c), script(c));
    const parsed = await upload(c);
    const { version } = await workers.upload(account(c), script(c), parsed, caller(c), false);
    const secretNames = await workers.store.listSecretNames(account(c), script(c));
    return ok(c, { ...renderVersion(version, secretNames), startup_time_ms: 0 });
  });

  app.get(`${base}/scripts/:script/versions`, async (c) => {
    await workers.requireScript(account(c), script(c));
    const secretNames = await workers.store.listSecretNames(account(c), script(c));
    const versions = await workers.store.listVersions(account(c), script(c));
    return ok(c, { items: versions.map((v) => renderVersion(v, secretNames)) });
  });

  app.get(`${base}/scripts/:script/versions/:version`, async (c) => {
    await workers.requireScript(account(c), script(c));
    const version = await workers.store.getVersion(account(c), script(c), c.req.param('version'));
    if (!version) throw WorkerErrors.versionNotFound(c.req.param('version'));
    return ok(c, renderVersion(version, await workers.store.listSecretNames(account(c), script(c))));
  });

  app.get(`${base}/scripts/:script/deployments`, async (c) => {
    await workers.requireScript(account(c), script(c));
    const deployments = await workers.store.listDeployments(account(c), script(c));
    return ok(c, { deployments: deployments.map(renderDeployment) });
  });

  app.post(`${base}/scripts/:script/deployments`, async (c) => {
    const body = await readJson(c, DeploymentCreateSchema, { code: CODE });
    const [first, ...rest] = body.versions;
    if (!first || rest.length > 0 || first.percentage !== 100) {
      throw WorkerErrors.invalidDeployment(
        'Ledge serves one version per Worker: send exactly one version with percentage 100.',
      );
    }
    const deployment = await workers.deploy(
      account(c),
      script(c),
      first.version_id,
      caller(c),
      normalizeAnnotations(body.annotations ?? {}),
    );
    return ok(c, renderDeployment(deployment));
  });

  app.get(`${base}/scripts/:script/deployments/:deployment`, async (c) => {
    await workers.requireScript(account(c), script(c));
    const id = c.req.param('deployment');
    const deployment = await workers.store.getDeployment(id);
    if (!deployment || deployment.account_id !== account(c) || deployment.script_name !== script(c)) {
      throw WorkerErrors.deploymentNotFound(id);
    }
    return ok(c, renderDeployment(deployment));
  });

  app.delete(`${base}/scripts/:script/deployments/:deployment`, async (c) => {
    await workers.deleteDeployment(account(c), script(c), c.req.param('deployment'));
    return ok(c, null);
  });

  const versionSettings = async (c: ApiContext) => {
    const found = await workers.requireScript(account(c), script(c));
    const version = await workers.currentVersion(found);
    const secretNames = await workers.store.listSecretNames(account(c), script(c));
    return {
      bindings: renderBindings(version?.bindings ?? [], secretNames),
      ...(version?.compatibility_date ? { compatibility_date: version.compatibility_date } : {}),
      compatibility_flags: version?.compatibility_flags ?? [],
      logpush: found.settings.logpush ?? false,
      // No `placement`: Ledge places nothing, and the SDK's placement object requires a mode or a target.
      tail_consumers: found.settings.tail_consumers ?? [],
      usage_model: 'standard',
    };
  };
  app.get(`${base}/scripts/:script/settings`, async (c) => ok(c, await versionSettings(c)));
  app.patch(`${base}/scripts/:script/settings`, async (c) => {
    const settings = await parseSettingsPatch(
      limitedRequest(c, uploadLimit, () => WorkerErrors.uploadTooLarge(uploadLimit)),
    );
    await workers.editScriptAndVersionSettings(account(c), script(c), settings, caller(c));
    return ok(c, await versionSettings(c));
  });

  const scriptSettings = async (c: ApiContext) => {
    const found = await workers.requireScript(account(c), script(c));
    const s = found.settings;
    return {
      logpush: s.logpush ?? false,
      tail_consumers: s.tail_consumers ?? null,
      observability: s.observability ?? { enabled: false },
      tags: s.tags ?? [],
    };
  };
  app.get(`${base}/scripts/:script/script-settings`, async (c) => ok(c, await scriptSettings(c)));
  app.patch(`${base}/scripts/:script/script-settings`, async (c) => {
    const patch = await readJson(c, ScriptSettingsPatchSchema, { code: CODE });
    await workers.patchSettings(account(c), script(c), patch);
    return ok(c, await scriptSettings(c));
  });

  app.get(`${base}/subdomain`, async (c) => {
    const subdomain = await workers.subdomain(account(c));
    if (!subdomain) throw WorkerErrors.subdomainNotFound();
    return ok(c, { subdomain });
  });
  app.delete(`${base}/subdomain`, async (c) => {
    await workers.releaseSubdomain(account(c));
    return ok(c, null);
  });
  app.put(`${base}/subdomain`, async (c) => {
    const body = await readJson(c, AccountSubdomainSchema, { code: 10032 });
    await workers.setSubdomain(account(c), body.subdomain);
    return ok(c, { subdomain: body.subdomain });
  });

  const scriptSubdomain = async (c: ApiContext) => {
    const found = await workers.requireScript(account(c), script(c));
    const subdomain = await workers.subdomain(account(c));
    const url = subdomain ? workers.functionUrl(found.name, subdomain) : undefined;
    return { enabled: found.workers_dev, previews_enabled: found.previews_enabled, ...(url ? { url } : {}) };
  };
  app.get(`${base}/scripts/:script/subdomain`, async (c) => ok(c, await scriptSubdomain(c)));
  app.post(`${base}/scripts/:script/subdomain`, async (c) => {
    const body = await readJson(c, ScriptSubdomainSchema, { code: CODE });
    await workers.setWorkersDev(account(c), script(c), body.enabled, body.previews_enabled ?? body.enabled);
    return ok(c, await scriptSubdomain(c));
  });

  app.delete(`${base}/scripts/:script/subdomain`, async (c) => {
    await workers.disableWorkersDev(account(c), script(c));
    return ok(c, await scriptSubdomain(c));
  });

  app.patch(`${base}/scripts/:script/secrets-bulk`, async (c) => {
    const body = await readJson(c, SecretsBulkSchema, { code: CODE });
    const names = await workers.bulkSecrets(account(c), script(c), body.secrets);
    return ok(c, Object.fromEntries(names.map((name) => [name, { name, type: 'secret_text' }])));
  });

  app.get(`${base}/scripts/:script/secrets`, async (c) => {
    await workers.requireScript(account(c), script(c));
    const names = await workers.store.listSecretNames(account(c), script(c));
    return ok(
      c,
      names.map((name) => ({ name, type: 'secret_text' })),
    );
  });
  app.put(`${base}/scripts/:script/secrets`, async (c) => {
    const body = await readJson(c, SecretPutSchema, { code: CODE });
    await workers.putSecret(account(c), script(c), body.name, body.text);
    return ok(c, { name: body.name, type: 'secret_text' });
  });
  app.get(`${base}/scripts/:script/secrets/:name`, async (c) => {
    await workers.requireScript(account(c), script(c));
    const names = await workers.store.listSecretNames(account(c), script(c));
    if (!names.includes(c.req.param('name'))) throw WorkerErrors.secretNotFound(c.req.param('name'));
    return ok(c, { name: c.req.param('name'), type: 'secret_text' });
  });
  app.delete(`${base}/scripts/:script/secrets/:name`, async (c) => {
    await workers.deleteSecret(account(c), script(c), c.req.param('name'));
    return ok(c, null);
  });

  return app;
}

import { createHash } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../src/api/app.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../notifications/receivers.ts';
import { ROUTE_TYPES, SDK_TYPES, type SdkTypeName } from './sdk-types/route-types.ts';
import { makeCertificate } from '../tls/helpers.ts';
import { sdkSchemas, type SdkType } from './sdk-types/schemas.ts';

/**
 * Issue 13, point 6: every /client/v4 answer matches the official SDK's types. Each route of the API (derived
 * from the app, so a new route cannot slip by) is mapped to its SDK response type in route-types.ts; this
 * test calls every mapped route once with a valid request and validates `result` against a JSON Schema
 * generated from the SDK's .d.ts. A route without a mapping, a route never exercised, or a field whose type
 * drifts from the SDK (null where the SDK says an optional string, an upper-case enum, ...) fails.
 */
interface Recorded {
  route: string;
  status: number;
  body: { success?: boolean; result?: unknown; errors?: unknown };
}

describe('answers match the official SDK types', () => {
  let ledge: TestLedge;
  let receiver: WebhookReceiver;
  let registered: Set<string>;
  const recorded: Recorded[] = [];
  let validators: Record<string, ValidateFunction>;

  beforeAll(async () => {
    const schemas = sdkSchemas(SDK_TYPES);
    const ajv = new Ajv({ allErrors: true, strict: false });
    validators = Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, ajv.compile(schema)]));
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    receiver = await startWebhookReceiver();
    registered = new Set(
      createApiApp(ledge.server.platform)
        .routes.filter((route) => route.method !== 'ALL' && !route.path.endsWith('*'))
        .map((route) => `${route.method} ${route.path}`),
    );
    await exerciseEveryRoute();
  });
  afterAll(async () => {
    await ledge?.close();
    await receiver?.close();
  });

  /** Calls `route` (skipped when this build has no such route) and records the answer. */
  async function call(route: string, path: string, body?: unknown, init: RequestInit = {}) {
    const [method] = route.split(' ');
    if (!registered.has(route)) return undefined;
    const json = body !== undefined && !(body instanceof FormData) && typeof body !== 'string';
    const response = await fetch(`${ledge.apiUrl}${path}`, {
      method,
      headers: { ...ledge.tokenHeaders, ...(json ? { 'content-type': 'application/json' } : {}) },
      body: json ? JSON.stringify(body) : (body as RequestInit['body']),
      ...init,
    });
    const text = await response.text();
    const parsed = (ROUTE_TYPES[route] && 'raw' in ROUTE_TYPES[route] ? {} : JSON.parse(text)) as Recorded['body'];
    recorded.push({ route, status: response.status, body: parsed });
    return parsed.result as Record<string, unknown> | undefined;
  }

  async function exerciseEveryRoute() {
    const A = '/client/v4/accounts/:account_id';
    const W = `${A}/workers`;
    const LB = `${A}/load_balancers`;
    const AL = `${A}/alerting/v3`;
    const R2 = `${A}/r2/buckets`;
    const a = `/accounts/${ledge.accountId}`;

    await call('GET /client/v4/user', '/user');
    await call('PATCH /client/v4/user', '/user', { first_name: 'Dev' });
    await call('GET /client/v4/user/tokens/verify', '/user/tokens/verify');
    await call('GET /client/v4/accounts', '/accounts');
    await call(`GET ${A}`, a);
    await call(`PUT ${A}`, a, { name: 'Ledge dev' });
    await call('GET /client/v4/memberships', '/memberships');
    // A second member of the account, whose membership can be read, answered and left (the owner's cannot be
    // left: it is the account's last administrator).
    const platformAccounts = ledge.server.platform.accounts;
    const { user: member } = await platformAccounts.createUser({ email: 'member@example.com' });
    await platformAccounts.addMember(ledge.accountId, member.id);
    const { value: memberToken } = await platformAccounts.createToken({ userId: member.id, name: 'member' });
    const asMember = (json: boolean): RequestInit => ({
      headers: { authorization: `Bearer ${memberToken}`, ...(json ? { 'content-type': 'application/json' } : {}) },
    });
    const memberships = (await (await fetch(`${ledge.apiUrl}/memberships`, asMember(false))).json()) as {
      result: { id: string; account: { id: string } }[];
    };
    const membership = memberships.result.find((m) => m.account.id === ledge.accountId)!.id;
    const mm = `/memberships/${membership}`;
    await call('GET /client/v4/memberships/:membership_id', mm, undefined, asMember(false));
    await call('PUT /client/v4/memberships/:membership_id', mm, { status: 'accepted' }, asMember(true));
    await call('GET /client/v4/user/invites', '/user/invites', undefined, asMember(false));
    await call('GET /client/v4/user/invites/:invite_id', `/user/invites/${membership}`, undefined, asMember(false));
    const invite = `/user/invites/${membership}`;
    await call('PATCH /client/v4/user/invites/:invite_id', invite, { status: 'accepted' }, asMember(true));
    await call('DELETE /client/v4/memberships/:membership_id', mm, undefined, asMember(false));

    // API tokens and members (what `ledge admin` does, through the API).
    await call('GET /client/v4/user/tokens/permission_groups', '/user/tokens/permission_groups');
    const token = (await call('POST /client/v4/user/tokens', '/user/tokens', {
      name: 'sdk token',
      policies: [
        {
          effect: 'allow',
          permission_groups: [{ id: 'c8fed203ed3043cba015a93ad1616f1f' }],
          resources: { [`com.cloudflare.api.account.${ledge.accountId}`]: '*' },
        },
      ],
    }))!;
    await call('GET /client/v4/user/tokens', '/user/tokens');
    await call('GET /client/v4/user/tokens/:token_id', `/user/tokens/${token['id']}`);
    await call('PUT /client/v4/user/tokens/:token_id/value', `/user/tokens/${token['id']}/value`, {});
    await call('DELETE /client/v4/user/tokens/:token_id', `/user/tokens/${token['id']}`);
    await call(`GET ${A}/roles`, `${a}/roles`);
    const invited = (await call(`POST ${A}/members`, `${a}/members`, {
      email: 'invitee@example.com',
      roles: ['e58cefd75d7adae0b761796c28815e5c'],
    }))!;
    await call(`GET ${A}/members`, `${a}/members`);
    await call(`GET ${A}/members/:member_id`, `${a}/members/${invited['id']}`);
    await call(`PUT ${A}/members/:member_id`, `${a}/members/${invited['id']}`, {
      roles: [{ id: '05784afa30c1afe1440e79d9351c7430' }],
    });
    await call(`DELETE ${A}/members/:member_id`, `${a}/members/${invited['id']}`);

    // Load balancing: a monitor, a pool using it, previews, references, then deletes.
    const monitor = (await call(`POST ${LB}/monitors`, `${a}/load_balancers/monitors`, {
      type: 'http',
      interval: 3600,
      description: 'sdk types',
    }))!;
    const m = `${a}/load_balancers/monitors/${String(monitor['id'])}`;
    await call(`GET ${LB}/monitors`, `${a}/load_balancers/monitors`);
    await call(`GET ${LB}/monitors/:monitor_id`, m);
    await call(`PUT ${LB}/monitors/:monitor_id`, m, { type: 'http', interval: 3600, description: 'put' });
    await call(`PATCH ${LB}/monitors/:monitor_id`, m, { description: 'patched' });
    const pool = (await call(`POST ${LB}/pools`, `${a}/load_balancers/pools`, {
      name: 'sdk-pool',
      monitor: monitor['id'],
      origins: [{ name: 'o', address: '127.0.0.1', enabled: false }],
    }))!;
    const p = `${a}/load_balancers/pools/${String(pool['id'])}`;
    await call(`GET ${LB}/pools`, `${a}/load_balancers/pools`);
    await call(`PATCH ${LB}/pools`, `${a}/load_balancers/pools`, { notification_email: '' });
    await call(`GET ${LB}/pools/:pool_id`, p);
    await call(`PUT ${LB}/pools/:pool_id`, p, {
      name: 'sdk-pool',
      monitor: monitor['id'],
      origins: [{ name: 'o', address: '127.0.0.1', enabled: false }],
    });
    await call(`PATCH ${LB}/pools/:pool_id`, p, { description: 'patched' });
    await call(`GET ${LB}/pools/:pool_id/health`, p + '/health');
    await call(`GET ${LB}/pools/:pool_id/references`, p + '/references');
    await call(`GET ${LB}/monitors/:monitor_id/references`, m + '/references');
    const poolPreview = (await call(`POST ${LB}/pools/:pool_id/preview`, p + '/preview', {
      type: 'http',
      interval: 60,
    }))!;
    await call(`POST ${LB}/monitors/:monitor_id/preview`, m + '/preview', { type: 'http', interval: 60 });
    await call(`GET ${LB}/preview/:preview_id`, `${a}/load_balancers/preview/${String(poolPreview['preview_id'])}`);

    // Notifications: a webhook (test message to a live receiver), a policy sending to it, history.
    const w = `${a}/alerting/v3/destinations/webhooks`;
    const webhook = (await call(`POST ${AL}/destinations/webhooks`, w, {
      name: 'sdk hook',
      url: receiver.url,
      secret: 'sdk-secret',
    }))!;
    await call(`GET ${AL}/destinations/webhooks`, w);
    await call(`GET ${AL}/destinations/webhooks/:webhook_id`, `${w}/${String(webhook['id'])}`);
    await call(`PUT ${AL}/destinations/webhooks/:webhook_id`, `${w}/${String(webhook['id'])}`, {
      name: 'sdk hook 2',
      url: receiver.url,
    });
    await call(`GET ${AL}/available_alerts`, `${a}/alerting/v3/available_alerts`);
    await call(`GET ${AL}/destinations/eligible`, `${a}/alerting/v3/destinations/eligible`);
    const policy = (await call(`POST ${AL}/policies`, `${a}/alerting/v3/policies`, {
      name: 'sdk policy',
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: { webhooks: [{ id: webhook['id'] }] },
      filters: { pool_id: [pool['id']] },
    }))!;
    const pol = `${a}/alerting/v3/policies/${String(policy['id'])}`;
    await call(`GET ${AL}/policies`, `${a}/alerting/v3/policies`);
    await call(`GET ${AL}/policies/:policy_id`, pol);
    await call(`PUT ${AL}/policies/:policy_id`, pol, {
      name: 'sdk policy',
      alert_type: 'load_balancing_health_alert',
      enabled: false,
      mechanisms: { webhooks: [{ id: webhook['id'] }] },
      filters: { pool_id: [pool['id']] },
    });
    await call(`GET ${AL}/history`, `${a}/alerting/v3/history`);
    const sil = `${a}/alerting/v3/silences`;
    await call(`POST ${AL}/silences`, sil, [
      { policy_id: policy['id'], end_time: new Date(Date.now() + 3_600_000).toISOString() },
    ]);
    const listed = (await (await fetch(`${ledge.apiUrl}${sil}`, { headers: ledge.tokenHeaders })).json()) as {
      result: { id: string }[];
    };
    const silence = listed.result[0]!;
    await call(`GET ${AL}/silences`, sil);
    await call(`PUT ${AL}/silences`, sil, [{ id: silence.id, end_time: new Date(Date.now() + 60_000).toISOString() }]);
    await call(`GET ${AL}/silences/:silence_id`, `${sil}/${String(silence.id)}`);
    await call(`DELETE ${AL}/silences/:silence_id`, `${sil}/${String(silence.id)}`);
    await call(`DELETE ${AL}/policies/:policy_id`, pol);
    await call(`DELETE ${AL}/destinations/webhooks/:webhook_id`, `${w}/${String(webhook['id'])}`);
    // Zones and a zone load balancer on the pool, deleted before the pool is.
    const Z = '/client/v4/zones/:zone_id';
    const zone = (await call('POST /client/v4/zones', '/zones', {
      name: 'sdk.example',
      account: { id: ledge.accountId },
    }))!;
    const z = `/zones/${String(zone['id'])}`;
    await call('GET /client/v4/zones', `/zones?account.id=${ledge.accountId}`);
    await call(`GET ${Z}`, z);
    const lbBody = { name: 'www.sdk.example', default_pools: [pool['id']], fallback_pool: pool['id'] };
    const lb = (await call(`POST ${Z}/load_balancers`, `${z}/load_balancers`, {
      ...lbBody,
      random_steering: { default_weight: 0.5, pool_weights: { [String(pool['id'])]: 0.5 } },
      session_affinity: 'cookie',
      session_affinity_attributes: { samesite: 'Lax', secure: 'Always', headers: ['x-user'] },
      adaptive_routing: { failover_across_pools: true },
      location_strategy: { mode: 'pop', prefer_ecs: 'proximity' },
      country_pools: { US: [pool['id']] },
      rules: [{ name: 'r', condition: 'true', overrides: { ttl: 5 } }],
    }))!;
    const l = `${z}/load_balancers/${String(lb['id'])}`;
    await call(`GET ${Z}/load_balancers`, `${z}/load_balancers`);
    await call(`GET ${Z}/load_balancers/:load_balancer_id`, l);
    await call(`PUT ${Z}/load_balancers/:load_balancer_id`, l, { ...lbBody, steering_policy: 'random' });
    await call(`PATCH ${Z}/load_balancers/:load_balancer_id`, l, { description: 'patched' });
    await call(`DELETE ${Z}/load_balancers/:load_balancer_id`, l);
    await call(`DELETE ${Z}`, z);
    await call(`DELETE ${LB}/pools/:pool_id`, p);
    await call(`DELETE ${LB}/monitors/:monitor_id`, m);

    // Workers: upload, versions, deployments, settings, subdomains, secrets, then delete.
    const s = `${a}/workers/scripts/sdk-worker`;
    const form = () => {
      const f = new FormData();
      f.set('metadata', JSON.stringify({ main_module: 'index.js', bindings: [], compatibility_date: '2025-01-01' }));
      f.set(
        'index.js',
        new File(['export default { fetch() { return new Response("hi"); } };'], 'index.js', {
          type: 'application/javascript+module',
        }),
      );
      return f;
    };
    await call(`PUT ${W}/scripts/:script`, s, form());
    // Queues, and sdk-worker as a consumer of one.
    const Q = `${A}/queues`;
    const queue = (await call(`POST ${Q}`, `${a}/queues`, { queue_name: 'sdk-queue' }))!;
    const q = `${a}/queues/${String(queue['queue_id'])}`;
    await call(`GET ${Q}`, `${a}/queues`);
    await call(`GET ${Q}/:queue_id`, q);
    await call(`PUT ${Q}/:queue_id`, q, { settings: { delivery_delay: 0 } });
    await call(`PATCH ${Q}/:queue_id`, q, { queue_name: 'sdk-queue' });
    await call(`GET ${Q}/:queue_id/metrics`, `${q}/metrics`);
    const consumer = (await call(`POST ${Q}/:queue_id/consumers`, `${q}/consumers`, {
      type: 'worker',
      script_name: 'sdk-worker',
      settings: { batch_size: 5 },
    }))!;
    const qc = `${q}/consumers/${String(consumer['consumer_id'])}`;
    await call(`GET ${Q}/:queue_id/consumers`, `${q}/consumers`);
    await call(`GET ${Q}/:queue_id/consumers/:consumer_id`, qc);
    await call(`PUT ${Q}/:queue_id/consumers/:consumer_id`, qc, { type: 'worker', script_name: 'sdk-worker' });
    await call(`DELETE ${Q}/:queue_id/consumers/:consumer_id`, qc);
    await call(`DELETE ${Q}/:queue_id`, q);
    // Workers routes and Custom Domains of sdk-worker, on a zone of the account.
    const routesZone = (await call('POST /client/v4/zones', '/zones', {
      name: 'routes.example',
      account: { id: ledge.accountId },
    }))!;
    const WR = '/client/v4/zones/:zone_id/workers/routes';
    const wr = `/zones/${String(routesZone['id'])}/workers/routes`;
    const route = (await call(`POST ${WR}`, wr, { pattern: 'routes.example/*', script: 'sdk-worker' }))!;
    await call(`GET ${WR}`, wr);
    await call(`GET ${WR}/:route_id`, `${wr}/${String(route['id'])}`);
    await call(`PUT ${WR}/:route_id`, `${wr}/${String(route['id'])}`, { pattern: 'www.routes.example/*' });
    await call(`DELETE ${WR}/:route_id`, `${wr}/${String(route['id'])}`);
    await call(`PUT ${W}/scripts/:script/routes`, `${s}/routes`, [
      { pattern: 'api.routes.example/*', zone_name: 'routes.example' },
    ]);
    await call(`GET ${W}/scripts/:script/routes`, `${s}/routes`);
    await call(`POST ${W}/scripts/:script/domains/changeset`, `${s}/domains/changeset?replace_state=true`, [
      { hostname: 'shop.routes.example' },
    ]);
    await call(`PUT ${W}/scripts/:script/domains/records`, `${s}/domains/records`, {
      override_scope: true,
      origins: [{ hostname: 'shop.routes.example' }],
    });
    const wd = `${a}/workers/domains`;
    const domain = (await call(`PUT ${W}/domains`, wd, { hostname: 'app.routes.example', service: 'sdk-worker' }))!;
    await call(`GET ${W}/domains`, wd);
    await call(`GET ${W}/domains/records`, `${wd}/records?service=sdk-worker`);
    await call(`GET ${W}/domains/:domain_id`, `${wd}/${String(domain['id'])}`);
    await call(`GET ${W}/domains/records/:domain_id`, `${wd}/records/${String(domain['id'])}`);
    await call(`DELETE ${W}/domains/:domain_id`, `${wd}/${String(domain['id'])}`);
    await call(`GET ${W}/scripts`, `${a}/workers/scripts`);
    await call(`GET ${W}/scripts/:script`, s);
    await call(`GET ${W}/workers/:script`, `${a}/workers/workers/sdk-worker`);
    const version = (await call(`POST ${W}/scripts/:script/versions`, `${s}/versions`, form()))!;
    const versionId = String(version['id']);
    await call(`GET ${W}/scripts/:script/versions`, `${s}/versions`);
    await call(`GET ${W}/scripts/:script/versions/:version`, `${s}/versions/${versionId}`);
    const deployments = (await call(`GET ${W}/scripts/:script/deployments`, `${s}/deployments`)) as {
      deployments: { id: string }[];
    };
    const deployment = (await call(`POST ${W}/scripts/:script/deployments`, `${s}/deployments`, {
      strategy: 'percentage',
      versions: [{ version_id: versionId, percentage: 100 }],
    }))!;
    await call(`GET ${W}/scripts/:script/deployments/:deployment`, `${s}/deployments/${String(deployment['id'])}`);
    await call(
      `DELETE ${W}/scripts/:script/deployments/:deployment`,
      `${s}/deployments/${deployments.deployments[0]!.id}`,
    );
    await call(`GET ${W}/scripts/:script/settings`, `${s}/settings`);
    const settingsForm = new FormData();
    settingsForm.set('settings', new Blob([JSON.stringify({ logpush: false })], { type: 'application/json' }));
    await call(`PATCH ${W}/scripts/:script/settings`, `${s}/settings`, settingsForm);
    await call(`GET ${W}/scripts/:script/script-settings`, `${s}/script-settings`);
    await call(`PATCH ${W}/scripts/:script/script-settings`, `${s}/script-settings`, { logpush: false });
    await call(`GET ${W}/subdomain`, `${a}/workers/subdomain`);
    await call(`PUT ${W}/subdomain`, `${a}/workers/subdomain`, { subdomain: 'sdk-types' });
    await call(`POST ${W}/scripts/:script/subdomain`, `${s}/subdomain`, { enabled: true });
    await call(`GET ${W}/scripts/:script/subdomain`, `${s}/subdomain`);
    await call(`PUT ${W}/scripts/:script/secrets`, `${s}/secrets`, {
      name: 'TOKEN',
      text: 'value',
      type: 'secret_text',
    });
    await call(`PATCH ${W}/scripts/:script/secrets-bulk`, `${s}/secrets-bulk`, {
      secrets: { OTHER: { name: 'OTHER', text: 'v', type: 'secret_text' } },
    });
    await call(`GET ${W}/scripts/:script/secrets`, `${s}/secrets`);
    await call(`GET ${W}/scripts/:script/secrets/:name`, `${s}/secrets/TOKEN`);
    await call(`DELETE ${W}/scripts/:script/secrets/:name`, `${s}/secrets/TOKEN`);
    await call(`PUT ${W}/scripts/:script/schedules`, `${s}/schedules`, [{ cron: '*/5 * * * *' }]);
    await call(`GET ${W}/scripts/:script/schedules`, `${s}/schedules`);
    await call(`POST ${W}/scripts/:script/schedules/trigger`, `${s}/schedules/trigger`, {});
    await call(`GET ${W}/scripts/:script/schedules/runs`, `${s}/schedules/runs`);
    await call(`DELETE ${W}/scripts/:script/subdomain`, `${s}/subdomain`);
    const tail = (await call(`POST ${W}/scripts/:script/tails`, `${s}/tails`, { filters: [] }))!;
    await call(`GET ${W}/scripts/:script/tails`, `${s}/tails`);
    await call(`DELETE ${W}/scripts/:script/tails/:tail_id`, `${s}/tails/${tail['id'] as string}`);
    // Durable Objects: a script hosting a class, the namespaces list and an object of it.
    const objects = new FormData();
    objects.set(
      'metadata',
      JSON.stringify({
        main_module: 'index.js',
        compatibility_date: '2025-04-01',
        bindings: [{ type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Counter' }],
        migrations: { new_tag: 'v1', steps: [{ new_sqlite_classes: ['Counter'] }] },
      }),
    );
    objects.set(
      'index.js',
      new File(
        [
          `import { DurableObject } from 'cloudflare:workers';
export class Counter extends DurableObject {}
export default { fetch() { return new Response('ok'); } };`,
        ],
        'index.js',
        { type: 'application/javascript+module' },
      ),
    );
    const hosted = await fetch(`${ledge.apiUrl}${a}/workers/scripts/sdk-objects`, {
      method: 'PUT',
      headers: ledge.tokenHeaders,
      body: objects,
    });
    expect(hosted.status).toBe(200);
    const namespaces = (await call(
      `GET ${W}/durable_objects/namespaces`,
      `${a}/workers/durable_objects/namespaces`,
    )) as unknown as { id: string }[];
    await call(
      `GET ${W}/durable_objects/namespaces/:namespace_id/objects`,
      `${a}/workers/durable_objects/namespaces/${namespaces[0]!.id}/objects`,
    );

    // Workflows: a script that runs one, registered as wrangler deploy does, an instance driven to its end.
    const flow = new FormData();
    flow.set(
      'metadata',
      JSON.stringify({
        main_module: 'index.js',
        compatibility_date: '2025-04-01',
        bindings: [{ type: 'workflow', name: 'FLOW', workflow_name: 'sdk-flow', class_name: 'Flow' }],
      }),
    );
    flow.set(
      'index.js',
      new File(
        [
          `import { WorkflowEntrypoint } from 'cloudflare:workers';
export class Flow extends WorkflowEntrypoint {
  async run(event, step) {
    const n = await step.do('double', { retries: { limit: 1, delay: 10 } }, async () => event.payload.n * 2);
    await step.sleep('nap', 10);
    const e = await step.waitForEvent('go', { type: 'go', timeout: '1 hour' });
    return { n, e: e.payload };
  }
}
export default { fetch() { return new Response('ok'); } };`,
        ],
        'index.js',
        { type: 'application/javascript+module' },
      ),
    );
    const flowScript = await fetch(`${ledge.apiUrl}${a}/workers/scripts/sdk-flow-worker`, {
      method: 'PUT',
      headers: ledge.tokenHeaders,
      body: flow,
    });
    expect(flowScript.status).toBe(200);
    const WF = `${A}/workflows`;
    const wf = `${a}/workflows/sdk-flow`;
    const flowRecord = await call(`PUT ${WF}/:workflow_name`, wf, {
      script_name: 'sdk-flow-worker',
      class_name: 'Flow',
    });
    await call(`GET ${WF}`, `${a}/workflows`);
    await call(`GET ${WF}/:workflow_name`, wf);
    await call(`GET ${WF}/:workflow_name/versions`, `${wf}/versions`);
    await call(`GET ${WF}/:workflow_name/versions/:version_id`, `${wf}/versions/${flowRecord?.['id'] as string}`);
    await call(`POST ${WF}/:workflow_name/instances`, `${wf}/instances`, { instance_id: 'i1', params: { n: 21 } });
    await call(`POST ${WF}/:workflow_name/instances/batch`, `${wf}/instances/batch`, [{ params: { n: 1 } }]);
    await call(`GET ${WF}/:workflow_name/instances`, `${wf}/instances`);
    await call(`GET ${WF}/:workflow_name/instances/`, `${wf}/instances/`);
    for (let i = 0; i < 200; i++) {
      const answer = await fetch(`${ledge.apiUrl}${wf}/instances/i1`, { headers: ledge.tokenHeaders });
      const status = ((await answer.json()) as { result?: { status?: string } }).result?.status;
      if (status === 'waiting') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await call(`POST ${WF}/:workflow_name/instances/:instance_id/events/:event_type`, `${wf}/instances/i1/events/go`, {
      ok: 1,
    });
    for (let i = 0; i < 200; i++) {
      const answer = await fetch(`${ledge.apiUrl}${wf}/instances/i1`, { headers: ledge.tokenHeaders });
      const status = ((await answer.json()) as { result?: { status?: string } }).result?.status;
      if (status === 'complete') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await call(`GET ${WF}/:workflow_name/instances/:instance_id`, `${wf}/instances/i1`);
    await call(`POST ${WF}/:workflow_name/instances`, `${wf}/instances`, { instance_id: 'i2' });
    await call(`PATCH ${WF}/:workflow_name/instances/:instance_id/status`, `${wf}/instances/i2/status`, {
      status: 'terminate',
    });
    await call(`GET ${WF}/:workflow_name/instances/:instance_id`, `${wf}/instances/i2`);
    await call(`DELETE ${WF}/:workflow_name`, wf);

    // D1: a database, its queries, an import as wrangler drives it and an export.
    const D1 = `${A}/d1/database`;
    const database = (await call(`POST ${D1}`, `${a}/d1/database`, { name: 'sdk-db' }))!;
    const d1 = `${a}/d1/database/${String(database['uuid'])}`;
    await call(`GET ${D1}`, `${a}/d1/database`);
    await call(`GET ${D1}/:database_id`, d1);
    await call(`PUT ${D1}/:database_id`, d1, { read_replication: { mode: 'disabled' } });
    await call(`PATCH ${D1}/:database_id`, d1, {});
    await call(`POST ${D1}/:database_id/query`, `${d1}/query`, {
      sql: 'CREATE TABLE t (a); INSERT INTO t VALUES (1)',
    });
    await call(`POST ${D1}/:database_id/raw`, `${d1}/raw`, { sql: 'SELECT * FROM t' });
    const sql = 'INSERT INTO t VALUES (1);';
    const etag = createHash('md5').update(sql).digest('hex');
    const init = (await call(`POST ${D1}/:database_id/import`, `${d1}/import`, { action: 'init', etag }))!;
    if (registered.has('PUT /client/v4/d1/uploads/:token')) {
      const upload = await fetch(String(init['upload_url']), { method: 'PUT', body: sql });
      recorded.push({ route: 'PUT /client/v4/d1/uploads/:token', status: upload.status, body: {} });
    }
    await call(`POST ${D1}/:database_id/import`, `${d1}/import`, {
      action: 'ingest',
      etag,
      filename: init['filename'],
    });
    const exported = (await call(`POST ${D1}/:database_id/export`, `${d1}/export`, { output_format: 'polling' }))!;
    const download = await fetch(String((exported['result'] as { signed_url: string }).signed_url));
    recorded.push({ route: 'GET /client/v4/d1/exports/:token', status: download.status, body: {} });
    await call(`DELETE ${D1}/:database_id`, d1);
    await call(`DELETE ${W}/scripts/:script`, s);
    // Static assets as wrangler uploads them: the session, the file (with the session's token, not an API
    // token), then a version of an assets-only site carrying the completion token.
    const asset = { hash: '0123456789abcdef0123456789abcdef', size: 5 };
    const session = await call(
      `POST ${W}/scripts/:script/assets-upload-session`,
      `${a}/workers/scripts/sdk-site/assets-upload-session`,
      { manifest: { '/index.html': asset } },
    );
    const files = new FormData();
    files.set(asset.hash, new File([Buffer.from('hello').toString('base64')], asset.hash));
    const uploaded = await call(`POST ${W}/assets/upload`, `${a}/workers/assets/upload?base64=true`, files, {
      headers: { authorization: `Bearer ${String(session?.['jwt'])}` },
    });
    const site = new FormData();
    site.set(
      'metadata',
      JSON.stringify({ assets: { jwt: uploaded?.['jwt'], config: {} }, compatibility_date: '2025-06-01' }),
    );
    await call(`PUT ${W}/scripts/:script`, `${a}/workers/scripts/sdk-site`, site);
    await call(`GET ${W}/scripts/:script/assets`, `${a}/workers/scripts/sdk-site/assets`);
    await call(`DELETE ${W}/scripts/:script`, `${a}/workers/scripts/sdk-site`);
    await call(`DELETE ${W}/subdomain`, `${a}/workers/subdomain`);

    // R2: a bucket with an object, listed, then removed.
    const b = `${a}/r2/buckets/sdk-bucket`;
    await call(`POST ${R2}`, `${a}/r2/buckets`, { name: 'sdk-bucket', locationHint: 'weur' });
    await call(`GET ${R2}`, `${a}/r2/buckets`);
    await call(`GET ${R2}/:bucket_name`, b);
    await call(`PATCH ${R2}/:bucket_name`, b, undefined, {
      headers: { ...ledge.tokenHeaders, 'cf-r2-storage-class': 'Standard' },
    });
    await call(`PUT ${R2}/:bucket_name/objects/:key{.+}`, `${b}/objects/dir/a.txt`, 'hello');
    await call(`GET ${R2}/:bucket_name/objects`, `${b}/objects`);
    await call(`GET ${R2}/:bucket_name/objects/:key{.+}`, `${b}/objects/dir/a.txt`);
    await call(`DELETE ${R2}/:bucket_name/objects/:key{.+}`, `${b}/objects/dir/a.txt`);
    await call(`PUT ${R2}/:bucket_name/lifecycle`, `${b}/lifecycle`, {
      rules: [
        {
          id: 'expire-tmp',
          enabled: true,
          conditions: { prefix: 'tmp/' },
          deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } },
          storageClassTransitions: [{ condition: { type: 'Age', maxAge: 3600 }, storageClass: 'InfrequentAccess' }],
          abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 604800 } },
        },
      ],
    });
    await call(`GET ${R2}/:bucket_name/lifecycle`, `${b}/lifecycle`);
    await call(`PUT ${R2}/:bucket_name/cors`, `${b}/cors`, {
      rules: [{ id: 'web', allowed: { origins: ['*'], methods: ['GET'], headers: ['*'] }, maxAgeSeconds: 60 }],
    });
    await call(`GET ${R2}/:bucket_name/cors`, `${b}/cors`);
    await call(`DELETE ${R2}/:bucket_name/cors`, `${b}/cors`);
    await call(`POST ${A}/r2/temp-access-credentials`, `${a}/r2/temp-access-credentials`, {
      bucket: 'sdk-bucket',
      parentAccessKeyId: (
        await ledge.server.platform.accounts
          .getUserByEmail(ledge.email)
          .then((user) => ledge.server.platform.accounts.createToken({ userId: user!.id, name: 'sdk-parent' }))
      ).token.id,
      permission: 'object-read-only',
      ttlSeconds: 60,
    });
    await call(`PUT ${R2}/:bucket_name/domains/managed`, `${b}/domains/managed`, { enabled: true });
    await call(`GET ${R2}/:bucket_name/domains/managed`, `${b}/domains/managed`);
    const r2Zone = await call('POST /client/v4/zones', '/zones', {
      name: 'sdk-r2.example',
      account: { id: ledge.accountId },
    });
    const d = `${b}/domains/custom`;
    await call(`POST ${R2}/:bucket_name/domains/custom`, d, {
      domain: 'cdn.sdk-r2.example',
      zoneId: r2Zone?.['id'],
      enabled: true,
      minTLS: '1.2',
    });
    await call(`GET ${R2}/:bucket_name/domains/custom`, d);
    await call(`GET ${R2}/:bucket_name/domains/custom/:domain`, `${d}/cdn.sdk-r2.example`);
    await call(`PUT ${R2}/:bucket_name/domains/custom/:domain`, `${d}/cdn.sdk-r2.example`, { enabled: false });
    await call(`DELETE ${R2}/:bucket_name/domains/custom/:domain`, `${d}/cdn.sdk-r2.example`);
    // HTTPS: an uploaded certificate, the zone's TLS settings, the ACME certificate packs.
    const tlsZone = `/zones/${r2Zone?.['id'] as string}`;
    const Zt = '/client/v4/zones/:zone_id';
    const pem = makeCertificate(['cdn.sdk-r2.example']);
    const certificate = await call(`POST ${Zt}/custom_certificates`, `${tlsZone}/custom_certificates`, {
      certificate: pem.certificate,
      private_key: pem.privateKey,
    });
    const cc = `${tlsZone}/custom_certificates/${certificate?.['id'] as string}`;
    await call(`GET ${Zt}/custom_certificates`, `${tlsZone}/custom_certificates`);
    await call(`GET ${Zt}/custom_certificates/:id`, cc);
    await call(`PATCH ${Zt}/custom_certificates/:id`, cc, { bundle_method: 'optimal' });
    await call(`DELETE ${Zt}/custom_certificates/:id`, cc);
    for (const [name, value] of [
      ['always_use_https', 'on'],
      ['min_tls_version', '1.2'],
    ] as const) {
      await call(`GET ${Zt}/settings/${name}`, `${tlsZone}/settings/${name}`);
      await call(`PATCH ${Zt}/settings/${name}`, `${tlsZone}/settings/${name}`, { value });
    }
    await call(`GET ${Zt}/ssl/certificate_packs`, `${tlsZone}/ssl/certificate_packs`);
    await call(`DELETE ${R2}/:bucket_name`, b);

    // Workers KV: a namespace with keys, read, listed and bulk-written, then removed.
    const KV = `${A}/storage/kv/namespaces`;
    const kv = await call(`POST ${KV}`, `${a}/storage/kv/namespaces`, { title: 'sdk-kv' });
    const n = `${a}/storage/kv/namespaces/${kv?.['id'] as string}`;
    await call(`GET ${KV}`, `${a}/storage/kv/namespaces`);
    await call(`GET ${KV}/:namespace_id`, n);
    await call(`PUT ${KV}/:namespace_id`, n, { title: 'sdk-kv-renamed' });
    const meta = new FormData();
    meta.set('value', 'hello');
    meta.set('metadata', '{"a":1}');
    await call(`PUT ${KV}/:namespace_id/values/:key{.+}`, `${n}/values/greeting`, meta);
    await call(`GET ${KV}/:namespace_id/values/:key{.+}`, `${n}/values/greeting`);
    await call(`GET ${KV}/:namespace_id/metadata/:key{.+}`, `${n}/metadata/greeting`);
    await call(`GET ${KV}/:namespace_id/keys`, `${n}/keys`);
    await call(`PUT ${KV}/:namespace_id/bulk`, `${n}/bulk`, [{ key: 'k1', value: 'v1', metadata: { b: 2 } }]);
    await call(`POST ${KV}/:namespace_id/bulk/get`, `${n}/bulk/get`, { keys: ['k1'], withMetadata: true });
    await call(`POST ${KV}/:namespace_id/bulk/delete`, `${n}/bulk/delete`, ['k1']);
    await call(`DELETE ${KV}/:namespace_id/bulk`, `${n}/bulk`, ['greeting']);
    await call(`DELETE ${KV}/:namespace_id/values/:key{.+}`, `${n}/values/greeting`);
    await call(`DELETE ${KV}/:namespace_id`, n);
  }

  it('maps every route of the API to an SDK response type (or says why it has none)', () => {
    const unmapped = [...registered].filter((route) => !ROUTE_TYPES[route]);
    expect(unmapped, 'routes with no SDK type in test/api/sdk-types/route-types.ts').toEqual([]);
    for (const type of Object.values(ROUTE_TYPES)) {
      if ('sdk' in type && type.sdk !== 'unknown') expect(SDK_TYPES).toHaveProperty(type.sdk);
    }
  });

  it('exercises every route that has an SDK type, and each answers 200 with success', () => {
    const typed = [...registered].filter((route) => {
      const type = ROUTE_TYPES[route];
      return type && !('notInSdk' in type) && !('unsupported' in type);
    });
    const answered = new Set(recorded.map((r) => r.route));
    expect(
      typed.filter((route) => !answered.has(route)),
      'routes the test never called',
    ).toEqual([]);
    // Cloudflare documents 200 for every success here, creates included (R2 buckets, pools, monitors,
    // policies, webhooks, versions, deployments): the SDK decides success by the status.
    const successStatuses = (route: string) => {
      const type = ROUTE_TYPES[route];
      return (type && 'success' in type && type.success) || [200];
    };
    const failed = recorded
      .filter((r) => !successStatuses(r.route).includes(r.status) || ('success' in r.body && r.body.success !== true))
      .map((r) => `${r.route} -> ${r.status} ${JSON.stringify(r.body.errors ?? '')}`);
    expect(failed).toEqual([]);
  });

  it('answers with results that validate against the SDK schemas', () => {
    const mismatches: string[] = [];
    for (const { route, body } of recorded) {
      const type = ROUTE_TYPES[route];
      if (!type || !('sdk' in type) || type.sdk === 'unknown') continue;
      const validate = validators[type.sdk as SdkTypeName]!;
      const sdkType: SdkType = SDK_TYPES[type.sdk as SdkTypeName];
      if (!validate(sdkType.wholeBody ? body : body.result)) {
        const where = (validate.errors ?? []).map(
          (e) => `${e.instancePath || '(result)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
        );
        mismatches.push(`${route} (${type.sdk}): ${where.join('; ')}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('fails on drift: a result the SDK does not allow is caught', () => {
    // The check itself must be able to fail: the answers this issue fixed, as they were, do not validate.
    expect(validators['Bucket']!({ name: 'b', location: 'WNAM' })).toBe(false);
    expect(validators['TokenVerify']!({ id: 'x', status: 'active', expires_on: null })).toBe(false);
    expect(validators['Webhook']!({ id: 'x', last_failure: 5 })).toBe(false);
    expect(validators['Webhook']!({ id: 'x', last_failure: null })).toBe(false);
    expect(validators['ObjectUpload']!({ key: 'k', size: 7 })).toBe(false);
    expect(validators['ScriptUpdate']!({ id: 's', migration_tag: null })).toBe(false);
    expect(validators['Settings']!({ placement: {} })).toBe(false);
    expect(validators['MembershipList']!([{ id: 'm', account: { id: 'a', name: 'n' } }])).toBe(false);
    // ...and the same answers, fixed, do.
    expect(validators['Bucket']!({ name: 'b', location: 'wnam' })).toBe(true);
    expect(validators['ObjectUpload']!({ key: 'k', size: '7' })).toBe(true);
  });
});

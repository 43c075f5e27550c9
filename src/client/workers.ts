import { readEnvelope, type ApiClient } from './api-client.ts';
import type { CronSchedule, ScriptSubdomain, SecretSummary } from './wire.ts';

export type { CronSchedule, ScriptSubdomain } from './wire.ts';

export interface ScriptModule {
  name: string;
  content: string | Uint8Array;
  /** Defaults to an ES module. */
  contentType?: string;
}

export interface ScriptUploadInput {
  mainModule: string;
  modules: ScriptModule[];
  bindings: Record<string, unknown>[];
  compatibilityDate?: string | undefined;
  compatibilityFlags?: string[] | undefined;
  /** wrangler's `limits` (`cpu_ms`: CPU time per invocation). */
  limits?: { cpu_ms?: number } | undefined;
  /** Static assets: the upload session's completion token and the serving config (cli/asset-files.ts). */
  assets?: { jwt: string; config: Record<string, unknown> } | undefined;
  /** Durable Object migrations (`old_tag`, `new_tag`, `steps`), computed as wrangler does. */
  migrations?: Record<string, unknown> | undefined;
}

export interface UploadedScript {
  id: string;
  etag: string | null;
  deployment_id: string | null;
  compatibility_date?: string;
}

/** Uploads and deploys a module Worker (`PUT /accounts/{a}/workers/scripts/{name}`, multipart). */
export async function uploadScript(
  api: ApiClient,
  accountId: string,
  name: string,
  input: ScriptUploadInput,
): Promise<UploadedScript> {
  const form = new FormData();
  // An assets-only Worker sends its metadata alone, without main_module.
  const metadata: Record<string, unknown> = {
    ...(input.mainModule ? { main_module: input.mainModule } : {}),
    bindings: input.bindings,
    compatibility_flags: input.compatibilityFlags ?? [],
  };
  if (input.assets) metadata['assets'] = input.assets;
  if (input.compatibilityDate) metadata['compatibility_date'] = input.compatibilityDate;
  if (input.limits) metadata['limits'] = input.limits;
  if (input.migrations) metadata['migrations'] = input.migrations;
  form.set('metadata', JSON.stringify(metadata));
  for (const module of input.modules) {
    const bytes = typeof module.content === 'string' ? new TextEncoder().encode(module.content) : module.content;
    form.set(
      module.name,
      new File([bytes as Uint8Array<ArrayBuffer>], module.name, {
        type: module.contentType ?? 'application/javascript+module',
      }),
    );
  }
  const path = `/accounts/${accountId}/workers/scripts/${encodeURIComponent(name)}`;
  const response = await api.raw('PUT', path, { rawBody: form });
  return (await readEnvelope<UploadedScript>(response)).result;
}

/** The account's workers subdomain (the `<subdomain>` of `<script>.<subdomain>.<domain>`). */
export async function getAccountSubdomain(api: ApiClient, accountId: string): Promise<string> {
  const path = `/accounts/${encodeURIComponent(accountId)}/workers/subdomain`;
  return (await api.request<{ subdomain: string }>('GET', path)).result.subdomain;
}

/** Turns the `<script>.<subdomain>.<domain>` route of a script on or off. */
export async function setScriptSubdomain(
  api: ApiClient,
  accountId: string,
  name: string,
  enabled: boolean,
): Promise<ScriptSubdomain> {
  const path = `/accounts/${accountId}/workers/scripts/${encodeURIComponent(name)}/subdomain`;
  return (await api.request<ScriptSubdomain>('POST', path, { body: { enabled } })).result;
}

/** Creates or replaces a secret of a script; its value is never returned by the API. */
export async function putSecret(
  api: ApiClient,
  accountId: string,
  script: string,
  name: string,
  text: string,
): Promise<void> {
  const path = `/accounts/${accountId}/workers/scripts/${encodeURIComponent(script)}/secrets`;
  await api.request('PUT', path, { body: { name, text, type: 'secret_text' } });
}

/** Names (and types) of a script's secrets. */
export async function listSecrets(api: ApiClient, accountId: string, script: string): Promise<SecretSummary[]> {
  const path = `/accounts/${accountId}/workers/scripts/${encodeURIComponent(script)}/secrets`;
  return (await api.request<SecretSummary[]>('GET', path)).result;
}

export async function deleteSecret(api: ApiClient, accountId: string, script: string, name: string): Promise<void> {
  const path = `/accounts/${accountId}/workers/scripts/${encodeURIComponent(script)}/secrets/${encodeURIComponent(name)}`;
  await api.request('DELETE', path);
}

/**
 * Deletes a Worker and everything it owns (`DELETE /workers/services/{name}`, as wrangler does). Without
 * `force` the API refuses (10064) while another script uses it as its tail Worker.
 */
export async function deleteWorker(api: ApiClient, accountId: string, script: string, force = false): Promise<void> {
  const path = `/accounts/${accountId}/workers/services/${encodeURIComponent(script)}`;
  await api.request('DELETE', path, { query: { force: String(force) } });
}

export interface FunctionLogLine {
  time: string;
  level: string;
  message: string[];
}

/**
 * Follows a script's console output (Ledge extension: an NDJSON stream); stop by leaving the loop. With
 * `follow: false`, only the last `history` kept lines, then the stream ends.
 */
export async function* tailScript(
  api: ApiClient,
  accountId: string,
  script: string,
  options: { history?: number; follow?: boolean } = {},
): AsyncGenerator<FunctionLogLine> {
  const path = `/accounts/${accountId}/workers/scripts/${encodeURIComponent(script)}/tail`;
  const query = { history: options.history ?? 0, ...(options.follow === false ? { follow: 'false' } : {}) };
  const response = await api.raw('GET', path, { query });
  if (!response.ok || !response.body) {
    await readEnvelope(response);
    return;
  }
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) yield JSON.parse(line) as FunctionLogLine;
  }
}

/** One recorded run of a script's scheduled() handler (a Ledge addition to the API). */
export interface CronRun {
  id: string;
  cron: string;
  scheduled_time: string;
  source: 'schedule' | 'manual';
  status: 'running' | 'ok' | 'exception' | 'error';
  started_on: string;
  duration_ms: number | null;
  error: string | null;
}

const schedulesPath = (accountId: string, script: string) =>
  `/accounts/${accountId}/workers/scripts/${encodeURIComponent(script)}/schedules`;

export async function getSchedules(api: ApiClient, accountId: string, script: string): Promise<CronSchedule[]> {
  return (await api.request<{ schedules: CronSchedule[] }>('GET', schedulesPath(accountId, script))).result.schedules;
}

/** Replaces a script's Cron Triggers, as `wrangler deploy` does with `triggers.crons`. */
export async function putSchedules(
  api: ApiClient,
  accountId: string,
  script: string,
  crons: string[],
): Promise<CronSchedule[]> {
  const body = crons.map((cron) => ({ cron }));
  return (await api.request<{ schedules: CronSchedule[] }>('PUT', schedulesPath(accountId, script), { body })).result
    .schedules;
}

export async function listCronRuns(api: ApiClient, accountId: string, script: string, limit = 20): Promise<CronRun[]> {
  return (await api.request<CronRun[]>('GET', `${schedulesPath(accountId, script)}/runs?limit=${limit}`)).result;
}

export async function triggerCron(api: ApiClient, accountId: string, script: string, cron?: string): Promise<CronRun> {
  const body = cron === undefined ? {} : { cron };
  return (await api.request<CronRun>('POST', `${schedulesPath(accountId, script)}/trigger`, { body })).result;
}

/** Whether a deployed script runs on the node that answers (Ledge's `/workers/runtime/scripts`). */
export interface ScriptRuntimeState {
  script: string;
  /** `failed`: it could not start, so its host answers 503 (error 1101); `not_loaded`: not routed, no Cron Triggers. */
  state: 'running' | 'failed' | 'not_loaded';
  version_id?: string;
  /** The last configuration of it that failed to start, and why. */
  failure?: { reason: string; at: string };
}

/** Each deployed script of the account and whether it runs (a Ledge extension of the Workers API). */
export async function listScriptStates(api: ApiClient, accountId: string): Promise<ScriptRuntimeState[]> {
  return (await api.request<ScriptRuntimeState[]>('GET', `/accounts/${accountId}/workers/runtime/scripts`)).result;
}

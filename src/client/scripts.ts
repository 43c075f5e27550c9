import type { ApiClient } from './api-client.ts';
import type { Deployment, Script, ScriptSettings, ScriptSubdomain } from './wire.ts';

/** What a script's page shows: its list entry, deployments, settings (bindings), assets and route. */
const scriptPath = (accountId: string, script: string) =>
  `/accounts/${encodeURIComponent(accountId)}/workers/scripts/${encodeURIComponent(script)}`;

/** The account's scripts (`GET /workers/scripts`). */
export async function listScripts(api: ApiClient, accountId: string): Promise<Script[]> {
  return (await api.request<Script[]>('GET', `/accounts/${encodeURIComponent(accountId)}/workers/scripts`)).result;
}

export async function listDeployments(api: ApiClient, accountId: string, script: string): Promise<Deployment[]> {
  const path = `${scriptPath(accountId, script)}/deployments`;
  return (await api.request<{ deployments: Deployment[] }>('GET', path)).result.deployments;
}

/** The current version's settings: bindings, compatibility date and flags. */
export async function getScriptSettings(api: ApiClient, accountId: string, script: string): Promise<ScriptSettings> {
  return (await api.request<ScriptSettings>('GET', `${scriptPath(accountId, script)}/settings`)).result;
}

/** Whether the script answers at `<script>.<subdomain>.<domain>`, and (Ledge) the URL. */
export async function getScriptSubdomain(api: ApiClient, accountId: string, script: string): Promise<ScriptSubdomain> {
  return (await api.request<ScriptSubdomain>('GET', `${scriptPath(accountId, script)}/subdomain`)).result;
}

/** The current version's static assets (a Ledge extension, not in Cloudflare's API or SDK). */
export interface AssetSummary {
  files: number;
  total_bytes: number;
  binding: string | null;
  config: {
    html_handling?: string;
    not_found_handling?: string;
    run_worker_first?: boolean | string[];
    has_headers: boolean;
    has_redirects: boolean;
  };
}

/** The current version's static assets, or null when it has none. */
export async function getScriptAssets(api: ApiClient, accountId: string, script: string): Promise<AssetSummary | null> {
  return (await api.request<AssetSummary | null>('GET', `${scriptPath(accountId, script)}/assets`)).result;
}

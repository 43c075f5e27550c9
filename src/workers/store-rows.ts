import { fromSqlBool } from '../db/index.ts';
import type { DeploymentRecord, ScriptRecord, ScriptSettings, VersionRecord } from './types.ts';

/** SQLite rows of the workers tables and their mapping to records (JSON columns parsed). */
export interface ScriptRow {
  account_id: string;
  name: string;
  tag: string;
  current_deployment_id: string | null;
  workers_dev: number;
  previews_enabled: number;
  settings: string;
  last_deployed_from: string;
  created_on: string;
  modified_on: string;
}

export interface VersionRow {
  id: string;
  account_id: string;
  script_name: string;
  number: number;
  main_module: string;
  modules: string;
  bindings: string;
  compatibility_date: string | null;
  compatibility_flags: string;
  cpu_ms: number | null;
  etag: string;
  source: string;
  author_email: string | null;
  created_on: string;
}

export interface DeploymentRow extends Omit<DeploymentRecord, 'annotations'> {
  annotations: string;
}

export function toScript(row: ScriptRow): ScriptRecord {
  return {
    account_id: row.account_id,
    name: row.name,
    tag: row.tag,
    current_deployment_id: row.current_deployment_id,
    workers_dev: fromSqlBool(row.workers_dev),
    previews_enabled: fromSqlBool(row.previews_enabled),
    settings: JSON.parse(row.settings) as ScriptSettings,
    last_deployed_from: row.last_deployed_from,
    created_on: row.created_on,
    modified_on: row.modified_on,
  };
}

export function toVersion(row: VersionRow): VersionRecord {
  return {
    ...row,
    modules: JSON.parse(row.modules) as VersionRecord['modules'],
    bindings: JSON.parse(row.bindings) as VersionRecord['bindings'],
    compatibility_flags: JSON.parse(row.compatibility_flags) as string[],
  };
}

export function toDeployment(row: DeploymentRow): DeploymentRecord {
  return { ...row, annotations: JSON.parse(row.annotations) as Record<string, unknown> };
}

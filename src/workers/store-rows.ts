import { fromSqlBool } from '../db/index.ts';
import type { VersionAssets } from './assets/schemas.ts';
import type { DeploymentRecord, ScriptRecord, ScriptSettings, VersionRecord } from './types.ts';

/** Rows of the workers tables (either dialect) and their mapping to records (JSON columns parsed). */
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
  migration_tag?: string | null;
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
  /** JSON of VersionAssets, or NULL for a version without static assets. */
  assets: string | null;
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
    migration_tag: row.migration_tag ?? null,
  };
}

export function toVersion(row: VersionRow): VersionRecord {
  return {
    ...row,
    modules: JSON.parse(row.modules) as VersionRecord['modules'],
    bindings: JSON.parse(row.bindings) as VersionRecord['bindings'],
    compatibility_flags: JSON.parse(row.compatibility_flags) as string[],
    assets: row.assets ? (JSON.parse(row.assets) as VersionAssets) : null,
  };
}

export function toDeployment(row: DeploymentRow): DeploymentRecord {
  return { ...row, annotations: JSON.parse(row.annotations) as Record<string, unknown> };
}

/** A deployed script's version, selected next to the script's columns with a `v_` prefix (listDeployed). */
export const DEPLOYED_VERSION_COLUMNS = `v.id AS v_id, v.account_id AS v_account_id, v.script_name AS v_script_name,
  v.number AS v_number, v.main_module AS v_main_module, v.modules AS v_modules, v.bindings AS v_bindings,
  v.compatibility_date AS v_compatibility_date, v.compatibility_flags AS v_compatibility_flags, v.cpu_ms AS v_cpu_ms,
  v.etag AS v_etag, v.source AS v_source, v.author_email AS v_author_email, v.created_on AS v_created_on,
  v.assets AS v_assets`;

export type DeployedRow = { [K in keyof VersionRow as `v_${K}`]: VersionRow[K] };

export function fromDeployedVersion(row: DeployedRow): VersionRow {
  return {
    id: row.v_id,
    account_id: row.v_account_id,
    script_name: row.v_script_name,
    number: Number(row.v_number),
    main_module: row.v_main_module,
    modules: row.v_modules,
    bindings: row.v_bindings,
    compatibility_date: row.v_compatibility_date,
    compatibility_flags: row.v_compatibility_flags,
    cpu_ms: row.v_cpu_ms,
    etag: row.v_etag,
    source: row.v_source,
    author_email: row.v_author_email,
    created_on: row.v_created_on,
    assets: row.v_assets,
  };
}

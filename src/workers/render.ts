import { DEFAULT_CPU_MS, type Binding } from './schemas.ts';
import type { DeploymentRecord, ScriptRecord, VersionRecord } from './types.ts';

/** Shapes of the v4 answers, as wrangler 4 reads them (see the reference transcript). */
export function renderScript(script: ScriptRecord, version: VersionRecord | undefined, deploymentId: string | null) {
  return {
    id: script.name,
    tag: script.tag,
    etag: version?.etag ?? null,
    handlers: ['fetch'],
    named_handlers: [],
    modified_on: script.modified_on,
    created_on: script.created_on,
    usage_model: 'standard',
    ...(version?.compatibility_date ? { compatibility_date: version.compatibility_date } : {}),
    compatibility_flags: version?.compatibility_flags ?? [],
    last_deployed_from: script.last_deployed_from,
    has_assets: Boolean(version?.assets),
    has_modules: (version?.modules.length ?? 1) > 0,
    logpush: script.settings.logpush ?? false,
    // No placement_mode: Ledge has none, and the SDK types it an optional string, not null.
    ...(script.migration_tag ? { migration_tag: script.migration_tag } : {}),
    tail_consumers: null,
    deployment_id: deploymentId,
  };
}

export function renderBindings(bindings: Binding[], secretNames: string[]) {
  return [...secretNames.map((name) => ({ name, type: 'secret_text' as const })), ...bindings];
}

export function renderVersion(version: VersionRecord, secretNames: string[]) {
  return {
    id: version.id,
    number: version.number,
    metadata: {
      author_email: version.author_email,
      created_on: version.created_on,
      modified_on: version.created_on,
      source: version.source,
      hasPreview: false,
    },
    annotations: {},
    resources: {
      script: { etag: version.etag, handlers: ['fetch'], last_deployed_from: version.source },
      script_runtime: {
        compatibility_date: version.compatibility_date ?? undefined,
        compatibility_flags: version.compatibility_flags,
        usage_model: 'standard',
        limits: { cpu_ms: version.cpu_ms ?? DEFAULT_CPU_MS },
      },
      bindings: renderBindings(version.bindings, secretNames),
    },
  };
}

export function renderDeployment(deployment: DeploymentRecord) {
  return {
    id: deployment.id,
    source: deployment.source,
    strategy: 'percentage',
    author_email: deployment.author_email,
    created_on: deployment.created_on,
    annotations: deployment.annotations,
    versions: [{ version_id: deployment.version_id, percentage: 100 }],
  };
}

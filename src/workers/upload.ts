import { jsonDepthExceeds, MAX_JSON_DEPTH, parseWith } from '../api-kit/body.ts';
import { clip, isLedgeError } from '../shared/errors.ts';
import { WorkerErrors } from './errors.ts';
import { RESERVED_BINDING_PREFIX } from '../workerd/index.ts';
import type { AssetConfig } from './assets/schemas.ts';
import type { Migrations } from './durable-objects/schemas.ts';
import { checkVariableCount, checkVariableSize, isVariable, normalizeAnnotations, WORKER_LIMITS } from './limits.ts';
import {
  IDENTIFIER,
  ModuleTypes,
  UploadMetadataSchema,
  type Binding,
  type ModuleType,
  type WorkerModule,
} from './schemas.ts';

/** A parsed, validated script or version upload, before it is merged with what the script already has. */
export interface ScriptUpload {
  mainModule: string;
  modules: WorkerModule[];
  bindings: Binding[];
  /** `secret_text` bindings sent with the upload: stored encrypted with the script's other secrets. */
  secrets: { name: string; text: string }[];
  /** Names of `{type: "inherit"}` bindings: copied from the previous version. */
  inherit: string[];
  /** Secrets the new version drops (a settings PATCH that lists bindings without them). */
  removeSecrets?: string[];
  keepBindings: string[];
  compatibilityDate: string | undefined;
  compatibilityFlags: string[];
  /** `limits.cpu_ms` of the upload; undefined: the default (DEFAULT_CPU_MS). */
  cpuMs: number | undefined;
  annotations: Record<string, unknown>;
  /** `assets` of the metadata: the session's completion token, the serving config and the binding's name. */
  assets?: { jwt?: string | undefined; config: AssetConfig; binding?: string | undefined } | undefined;
  /** `keep_assets`: the new version keeps the previous version's files (and config, unless sent). */
  keepAssets?: boolean;
  /** Durable Object migrations sent with the upload (applied by a deployment only). */
  migrations?: Migrations | undefined;
  /** Source maps sent with the upload (wrangler's upload_source_maps), by part name: used for load errors only. */
  sourceMaps?: Record<string, string>;
}

const MODULE_TYPE_BY_CONTENT_TYPE = new Map<string, ModuleType>([
  ...Object.entries(ModuleTypes).map(([type, contentType]) => [contentType, type as ModuleType] as const),
  ['text/javascript+module', 'esModule'],
  ['text/javascript', 'commonJs'],
]);
/** Module names become file names in the runtime directory: relative paths only. */
const SAFE_MODULE_NAME = /^[A-Za-z0-9_@.+-][A-Za-z0-9_@.+\-/]{0,255}$/;
/** Parts that describe the script but are not modules (wrangler uploads source maps when asked). */
const SOURCE_MAP_TYPE = 'application/source-map';

/** Reads `multipart/form-data` the way wrangler sends it: a `metadata` JSON part, then one part per module. */
export async function parseScriptUpload(request: Request, today: string): Promise<ScriptUpload> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    throw WorkerErrors.malformedUpload(`expected Content-Type multipart/form-data, got "${contentType || 'none'}"`);
  }
  const form = await readForm(request);
  const metadataPart = form.get('metadata');
  if (metadataPart === null) throw WorkerErrors.malformedUpload('the "metadata" part is missing');
  const metadataText = typeof metadataPart === 'string' ? metadataPart : await metadataPart.text();
  let metadataJson: unknown;
  try {
    metadataJson = JSON.parse(metadataText);
  } catch (error) {
    throw WorkerErrors.malformedUpload(`the "metadata" part is not JSON: ${clip((error as Error).message)}`);
  }
  // Bindings and annotations are stored and written into the workerd config with JSON.stringify,
  // which overflows the stack on deep nesting.
  if (jsonDepthExceeds(metadataJson, MAX_JSON_DEPTH)) {
    throw WorkerErrors.invalidScript(`The "metadata" part is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  const metadata = parseWith(UploadMetadataSchema, metadataJson, 10021);
  const hasAssets = metadata.assets !== undefined || metadata.keep_assets === true;
  // An assets-only Worker (no `main` in wrangler's config) uploads metadata alone.
  if (!metadata.main_module && hasAssets && metadata.body_part === undefined) {
    if ([...form.keys()].some((field) => field !== 'metadata')) {
      throw WorkerErrors.invalidScript('metadata.main_module is required when modules are uploaded.');
    }
    if (metadata.compatibility_date !== undefined) checkCompatibilityDate(metadata.compatibility_date, today);
    checkCompatibilityFlags(metadata.compatibility_flags);
    return {
      mainModule: '',
      modules: [],
      bindings: [],
      secrets: [],
      inherit: [],
      keepBindings: metadata.keep_bindings,
      compatibilityDate: metadata.compatibility_date,
      compatibilityFlags: metadata.compatibility_flags,
      cpuMs: metadata.limits?.cpu_ms,
      annotations: normalizeAnnotations(metadata.annotations ?? {}),
      assets: { jwt: metadata.assets?.jwt, config: metadata.assets?.config ?? {} },
      keepAssets: metadata.keep_assets === true,
    };
  }
  if (!metadata.main_module) {
    throw WorkerErrors.invalidScript(
      metadata.body_part
        ? 'Service-worker syntax (body_part) is not supported: upload an ES module and name it in main_module.'
        : 'metadata.main_module is required: name the ES module that exports the fetch handler.',
    );
  }

  const modules: WorkerModule[] = [];
  const sourceMaps: Record<string, string> = {};
  for (const [field, value] of form.entries()) {
    if (field === 'metadata' || typeof value === 'string') continue;
    const type = (value.type || '').split(';')[0]!.trim().toLowerCase();
    if (type === SOURCE_MAP_TYPE) {
      sourceMaps[field] = await value.text();
      continue;
    }
    if (
      !SAFE_MODULE_NAME.test(field) ||
      field.split('/').some((segment) => segment === '..' || segment === '.' || segment === '')
    ) {
      throw WorkerErrors.invalidScript(
        `Invalid module name "${clip(field)}": use a relative path without "." or ".." segments.`,
      );
    }
    // The platform's own modules (__ledge_main.js, __ledge/trace.js, ...) sit beside the user's.
    if (isReservedName(field)) {
      throw WorkerErrors.invalidScript(
        `Module name "${clip(field)}" is reserved: names starting with ${RESERVED_BINDING_PREFIX.toLowerCase()} (any case) belong to the platform.`,
      );
    }
    const moduleType = MODULE_TYPE_BY_CONTENT_TYPE.get(type);
    if (!moduleType)
      throw WorkerErrors.invalidScript(
        `Module "${clip(field)}" has an unsupported content type "${clip(type || 'none')}".`,
      );
    modules.push({ name: field, type: moduleType, content: Buffer.from(await value.arrayBuffer()).toString('base64') });
  }
  const main = modules.find((m) => m.name === metadata.main_module);
  if (!main) {
    throw WorkerErrors.invalidScript(
      `No such module "${clip(metadata.main_module)}": main_module must name one of the uploaded parts (got ${clip(modules.map((m) => `"${m.name}"`).join(', ') || 'none')}).`,
    );
  }
  if (main.type !== 'esModule') {
    throw WorkerErrors.invalidScript(
      `The main module "${main.name}" must be an ES module (Content-Type ${ModuleTypes.esModule}).`,
    );
  }
  if (metadata.compatibility_date !== undefined) checkCompatibilityDate(metadata.compatibility_date, today);
  checkCompatibilityFlags(metadata.compatibility_flags);

  const { bindings, secrets, inherit, assetsBinding } = parseBindings(metadata.bindings);
  if (assetsBinding !== undefined && !hasAssets) {
    throw WorkerErrors.invalidScript(
      `Binding "${clip(assetsBinding)}" of type assets needs assets: upload them (wrangler's [assets] directory) with the script.`,
    );
  }
  return {
    mainModule: main.name,
    modules,
    bindings,
    secrets,
    inherit,
    keepBindings: metadata.keep_bindings,
    compatibilityDate: metadata.compatibility_date,
    compatibilityFlags: metadata.compatibility_flags,
    cpuMs: metadata.limits?.cpu_ms,
    annotations: normalizeAnnotations(metadata.annotations ?? {}),
    migrations: metadata.migrations,
    sourceMaps,
    ...(hasAssets
      ? {
          assets: { jwt: metadata.assets?.jwt, config: metadata.assets?.config ?? {}, binding: assetsBinding },
          keepAssets: metadata.keep_assets === true,
        }
      : {}),
  };
}

export function checkCompatibilityDate(date: string, today: string): void {
  // An impossible date (2025-13-45) parses to NaN; one that rolls over (2025-02-30) prints differently.
  const parsed = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : NaN;
  const valid = !Number.isNaN(parsed) && new Date(parsed).toISOString().startsWith(date);
  if (!valid)
    throw WorkerErrors.invalidScript(`Invalid compatibility_date "${clip(date)}": use a real date written YYYY-MM-DD.`);
  if (date > today)
    throw WorkerErrors.invalidScript(`Invalid compatibility_date "${date}": it is in the future (today is ${today}).`);
}

export function checkBindingName(name: string, what = 'Binding'): void {
  if (name.length > WORKER_LIMITS.maxNameLength) {
    throw WorkerErrors.invalidScript(
      `${what} name "${clip(name)}" is too long: names are limited to ${WORKER_LIMITS.maxNameLength} characters.`,
    );
  }
  if (!IDENTIFIER.test(name)) {
    throw WorkerErrors.invalidScript(`${what} name "${clip(name)}" is not a valid JavaScript identifier.`);
  }
  if (isReservedName(name)) {
    throw WorkerErrors.invalidScript(
      `${what} name "${clip(name)}" is reserved: names starting with ${RESERVED_BINDING_PREFIX} (any case) belong to the platform.`,
    );
  }
}

/** The platform's namespace of binding, secret and module names (isolate/trace.ts RESERVED_BINDING_PREFIX). */
function isReservedName(name: string): boolean {
  return name.slice(0, RESERVED_BINDING_PREFIX.length).toUpperCase() === RESERVED_BINDING_PREFIX;
}

export function checkCompatibilityFlags(flags: string[]): void {
  if (flags.length > WORKER_LIMITS.maxFlags) {
    throw WorkerErrors.invalidScript(`Too many compatibility_flags: at most ${WORKER_LIMITS.maxFlags}.`);
  }
  const long = flags.find((flag) => flag.length > WORKER_LIMITS.maxFlagLength);
  if (long !== undefined) {
    throw WorkerErrors.invalidScript(
      `Compatibility flag "${clip(long)}" is too long: flags are limited to ${WORKER_LIMITS.maxFlagLength} characters.`,
    );
  }
}

export function parseBindings(raw: { name: string; type: string; [key: string]: unknown }[]) {
  const bindings: Binding[] = [];
  const secrets: { name: string; text: string }[] = [];
  const inherit: string[] = [];
  let assetsBinding: string | undefined;
  const seen = new Set<string>();
  for (const binding of raw) {
    checkBindingName(binding.name);
    if (seen.has(binding.name)) throw WorkerErrors.invalidScript(`Binding name "${clip(binding.name)}" is used twice.`);
    seen.add(binding.name);
    const field = (key: string): string => {
      const value = binding[key];
      if (typeof value !== 'string') {
        throw WorkerErrors.invalidScript(
          `Binding "${clip(binding.name)}" of type ${binding.type} needs a string "${key}".`,
        );
      }
      return value;
    };
    switch (binding.type) {
      case 'r2_bucket': {
        const jurisdiction = binding['jurisdiction'];
        bindings.push({
          name: binding.name,
          type: 'r2_bucket',
          bucket_name: bucketName(binding.name, field('bucket_name')),
          ...(typeof jurisdiction === 'string'
            ? { jurisdiction: short(binding.name, 'jurisdiction', jurisdiction) }
            : {}),
        });
        break;
      }
      case 'd1': {
        // wrangler sends the database's id as `id` (the Cloudflare API's name for it is `database_id`).
        const id = typeof binding['id'] === 'string' ? binding['id'] : binding['database_id'];
        if (typeof id !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
          throw WorkerErrors.invalidScript(
            `binding ${clip(binding.name)} of type d1 must have a valid \`id\` specified`,
          );
        }
        bindings.push({ name: binding.name, type: 'd1', id: id.toLowerCase() });
        break;
      }
      case 'queue':
        // The queue's id is the account's own record's, looked up when the upload is checked (service.ts).
        bindings.push({ name: binding.name, type: 'queue', queue_name: field('queue_name'), queue_id: '' });
        break;
      case 'kv_namespace':
        bindings.push({ name: binding.name, type: 'kv_namespace', namespace_id: field('namespace_id') });
        break;
      case 'plain_text': {
        const text = field('text');
        checkVariableSize('Variable', binding.name, Buffer.byteLength(text));
        bindings.push({ name: binding.name, type: 'plain_text', text });
        break;
      }
      case 'json':
        if (!('json' in binding))
          throw WorkerErrors.invalidScript(`Binding "${clip(binding.name)}" of type json needs a "json" value.`);
        checkVariableSize('Variable', binding.name, Buffer.byteLength(JSON.stringify(binding['json']) ?? ''));
        bindings.push({ name: binding.name, type: 'json', json: binding['json'] });
        break;
      case 'secret_text': {
        const text = field('text');
        checkVariableSize('Secret', binding.name, Buffer.byteLength(text));
        secrets.push({ name: binding.name, text });
        break;
      }
      case 'durable_object_namespace': {
        const className = field('class_name');
        checkBindingName(className, 'Durable Object class');
        const scriptName = binding['script_name'];
        if (scriptName !== undefined && typeof scriptName !== 'string')
          throw WorkerErrors.invalidScript(`Binding "${clip(binding.name)}": script_name must be a string.`);
        bindings.push({
          name: binding.name,
          type: 'durable_object_namespace',
          class_name: className,
          ...(scriptName !== undefined ? { script_name: scriptName } : {}),
        });
        break;
      }
      case 'service': {
        const entrypoint = binding['entrypoint'];
        if (entrypoint !== undefined && (typeof entrypoint !== 'string' || !IDENTIFIER.test(entrypoint)))
          throw WorkerErrors.invalidScript(
            `Binding "${clip(binding.name)}" of type service: entrypoint must name an export of the Worker (a JavaScript identifier).`,
          );
        bindings.push({
          name: binding.name,
          type: 'service',
          service: field('service'),
          ...(entrypoint === undefined ? {} : { entrypoint }),
        });
        break;
      }
      case 'workflow':
        bindings.push(parseWorkflowBinding(binding));
        break;
      case 'inherit':
        inherit.push(binding.name);
        break;
      case 'assets':
        if (assetsBinding !== undefined) throw WorkerErrors.invalidScript('A Worker has at most one assets binding.');
        assetsBinding = binding.name;
        break;
      default:
        throw WorkerErrors.invalidScript(
          `Unknown binding type "${clip(binding.type)}" for binding "${clip(binding.name)}": Ledge supports r2_bucket, kv_namespace, d1, queue, durable_object_namespace, workflow, plain_text, secret_text, json, service, assets and inherit.`,
        );
    }
  }
  checkVariableCount(bindings.filter(isVariable).length + secrets.length);
  return { bindings, secrets, inherit, assetsBinding };
}

/** Workflow names as Cloudflare takes them: letters, digits, `-` and `_`, up to 64 characters. */
const WORKFLOW_NAME = /^[a-zA-Z0-9_][a-zA-Z0-9_-]{0,63}$/;

/** A `workflow` binding as wrangler sends it: `workflow_name`, `class_name`, optional `script_name`. */
function parseWorkflowBinding(binding: { name: string; [key: string]: unknown }): Binding {
  const { workflow_name: workflow, class_name: className, script_name: scriptName } = binding;
  if (typeof workflow !== 'string' || !WORKFLOW_NAME.test(workflow)) {
    throw WorkerErrors.invalidScript(
      `Binding "${clip(binding.name)}" of type workflow: workflow_name must be 1 to 64 letters, digits, "-" or "_".`,
    );
  }
  if (typeof className !== 'string') {
    throw WorkerErrors.invalidScript(`Binding "${clip(binding.name)}" of type workflow needs a string "class_name".`);
  }
  checkBindingName(className, 'Workflow class');
  if (scriptName !== undefined && scriptName !== null && typeof scriptName !== 'string')
    throw WorkerErrors.invalidScript(`Binding "${clip(binding.name)}": script_name must be a string.`);
  return {
    name: binding.name,
    type: 'workflow',
    workflow_name: workflow,
    class_name: className,
    ...(typeof scriptName === 'string' ? { script_name: scriptName } : {}),
  };
}

/** R2 jurisdictions are short words ("eu", "fedramp"). */
function short(binding: string, key: string, value: string): string {
  if (value.length > 32) {
    throw WorkerErrors.invalidScript(`Binding "${clip(binding)}": ${key} "${clip(value, 32)}" is not a jurisdiction.`);
  }
  return value;
}

/** R2 bucket names are 3-63 characters: anything longer cannot name a bucket. */
function bucketName(binding: string, name: string): string {
  if (name.length > 63) {
    throw WorkerErrors.invalidScript(
      `Binding "${clip(binding)}" names the R2 bucket "${clip(name)}": bucket names have at most 63 characters.`,
    );
  }
  return name;
}

/** Parses a multipart body; a body over its size limit (see limitedRequest) fails the parser with that error as cause. */
export async function readForm(request: Request): Promise<FormData> {
  try {
    return await request.formData();
  } catch (error) {
    if (isLedgeError(error)) throw error;
    if (error instanceof Error && isLedgeError(error.cause)) throw error.cause;
    throw WorkerErrors.malformedUpload(clip((error as Error).message));
  }
}

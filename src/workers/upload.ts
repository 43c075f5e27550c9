import { parseWith } from '../api/body.ts';
import { WorkerErrors } from './errors.ts';
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
  keepBindings: string[];
  compatibilityDate: string | undefined;
  compatibilityFlags: string[];
  /** `limits.cpu_ms` of the upload; undefined: the default (DEFAULT_CPU_MS). */
  cpuMs: number | undefined;
  annotations: Record<string, unknown>;
}

const MODULE_TYPE_BY_CONTENT_TYPE = new Map<string, ModuleType>([
  ...Object.entries(ModuleTypes).map(([type, contentType]) => [contentType, type as ModuleType] as const),
  ['text/javascript+module', 'esModule'],
  ['text/javascript', 'commonJs'],
]);
/** Module names become file names in the runtime directory: relative paths only. */
const SAFE_MODULE_NAME = /^[A-Za-z0-9_@.+-][A-Za-z0-9_@.+\-/]{0,255}$/;
/** Parts that describe the script but are not modules (wrangler uploads source maps when asked). */
const IGNORED_CONTENT_TYPES = new Set(['application/source-map']);

/** Reads `multipart/form-data` the way wrangler sends it: a `metadata` JSON part, then one part per module. */
export async function parseScriptUpload(request: Request, today: string): Promise<ScriptUpload> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    throw WorkerErrors.malformedUpload(`expected Content-Type multipart/form-data, got "${contentType || 'none'}"`);
  }
  let form: FormData;
  try {
    form = await request.formData();
  } catch (error) {
    throw WorkerErrors.malformedUpload((error as Error).message);
  }
  const metadataPart = form.get('metadata');
  if (metadataPart === null) throw WorkerErrors.malformedUpload('the "metadata" part is missing');
  const metadataText = typeof metadataPart === 'string' ? metadataPart : await metadataPart.text();
  let metadataJson: unknown;
  try {
    metadataJson = JSON.parse(metadataText);
  } catch (error) {
    throw WorkerErrors.malformedUpload(`the "metadata" part is not JSON: ${(error as Error).message}`);
  }
  const metadata = parseWith(UploadMetadataSchema, metadataJson, 10021);
  if (!metadata.main_module) {
    throw WorkerErrors.invalidScript(
      metadata.body_part
        ? 'Service-worker syntax (body_part) is not supported: upload an ES module and name it in main_module.'
        : 'metadata.main_module is required: name the ES module that exports the fetch handler.',
    );
  }

  const modules: WorkerModule[] = [];
  for (const [field, value] of form.entries()) {
    if (field === 'metadata' || typeof value === 'string') continue;
    const type = (value.type || '').split(';')[0]!.trim().toLowerCase();
    if (IGNORED_CONTENT_TYPES.has(type)) continue;
    if (
      !SAFE_MODULE_NAME.test(field) ||
      field.split('/').some((segment) => segment === '..' || segment === '.' || segment === '')
    ) {
      throw WorkerErrors.invalidScript(
        `Invalid module name "${field}": use a relative path without "." or ".." segments.`,
      );
    }
    const moduleType = MODULE_TYPE_BY_CONTENT_TYPE.get(type);
    if (!moduleType)
      throw WorkerErrors.invalidScript(`Module "${field}" has an unsupported content type "${type || 'none'}".`);
    modules.push({ name: field, type: moduleType, content: Buffer.from(await value.arrayBuffer()).toString('base64') });
  }
  const main = modules.find((m) => m.name === metadata.main_module);
  if (!main) {
    throw WorkerErrors.invalidScript(
      `No such module "${metadata.main_module}": main_module must name one of the uploaded parts (got ${modules.map((m) => `"${m.name}"`).join(', ') || 'none'}).`,
    );
  }
  if (main.type !== 'esModule') {
    throw WorkerErrors.invalidScript(
      `The main module "${main.name}" must be an ES module (Content-Type ${ModuleTypes.esModule}).`,
    );
  }
  if (metadata.compatibility_date !== undefined) checkCompatibilityDate(metadata.compatibility_date, today);

  const { bindings, secrets, inherit } = parseBindings(metadata.bindings);
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
    annotations: metadata.annotations ?? {},
  };
}

export function checkCompatibilityDate(date: string, today: string): void {
  const valid = /^\d{4}-\d{2}-\d{2}$/.test(date) && new Date(`${date}T00:00:00Z`).toISOString().startsWith(date);
  if (!valid)
    throw WorkerErrors.invalidScript(`Invalid compatibility_date "${date}": use a real date written YYYY-MM-DD.`);
  if (date > today)
    throw WorkerErrors.invalidScript(`Invalid compatibility_date "${date}": it is in the future (today is ${today}).`);
}

export function checkBindingName(name: string, what = 'Binding'): void {
  if (!IDENTIFIER.test(name)) {
    throw WorkerErrors.invalidScript(`${what} name "${name}" is not a valid JavaScript identifier.`);
  }
}

function parseBindings(raw: { name: string; type: string; [key: string]: unknown }[]) {
  const bindings: Binding[] = [];
  const secrets: { name: string; text: string }[] = [];
  const inherit: string[] = [];
  const seen = new Set<string>();
  for (const binding of raw) {
    checkBindingName(binding.name);
    if (seen.has(binding.name)) throw WorkerErrors.invalidScript(`Binding name "${binding.name}" is used twice.`);
    seen.add(binding.name);
    const field = (key: string): string => {
      const value = binding[key];
      if (typeof value !== 'string') {
        throw WorkerErrors.invalidScript(`Binding "${binding.name}" of type ${binding.type} needs a string "${key}".`);
      }
      return value;
    };
    switch (binding.type) {
      case 'r2_bucket': {
        const jurisdiction = binding['jurisdiction'];
        bindings.push({
          name: binding.name,
          type: 'r2_bucket',
          bucket_name: field('bucket_name'),
          ...(typeof jurisdiction === 'string' ? { jurisdiction } : {}),
        });
        break;
      }
      case 'plain_text':
        bindings.push({ name: binding.name, type: 'plain_text', text: field('text') });
        break;
      case 'json':
        if (!('json' in binding))
          throw WorkerErrors.invalidScript(`Binding "${binding.name}" of type json needs a "json" value.`);
        bindings.push({ name: binding.name, type: 'json', json: binding['json'] });
        break;
      case 'secret_text':
        secrets.push({ name: binding.name, text: field('text') });
        break;
      case 'inherit':
        inherit.push(binding.name);
        break;
      default:
        throw WorkerErrors.invalidScript(
          `Unknown binding type "${binding.type}" for binding "${binding.name}": Ledge supports r2_bucket, plain_text, secret_text, json and inherit.`,
        );
    }
  }
  return { bindings, secrets, inherit };
}

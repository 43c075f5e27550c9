import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGenerator } from 'ts-json-schema-generator';
import { REPO_ROOT } from '../../helpers/ledge.ts';

/** A response type of the official SDK: a TypeScript type expression over one module of `cloudflare/resources`. */
export interface SdkType {
  /** Module under node_modules/cloudflare/resources, without extension, e.g. `r2/buckets/buckets`. */
  module: string;
  /** Type expression; `$` names the module, e.g. `$.Bucket` or `Array<$.Pool>`. */
  type: string;
  /**
   * Copy the named interface's declaration out of the module's .d.ts and use that (with `type` then naming
   * the copy): for an interface merged with a class of the same name, whose schema the generator cannot read.
   */
  copyInterface?: string;
  /** The SDK method returns the whole body, not `result` (a few deletes): the schema applies to the body. */
  wholeBody?: true;
}

export type JsonSchema = Record<string, unknown>;

const SDK_ROOT = join(REPO_ROOT, 'node_modules/cloudflare');
const CACHE_DIR = join(REPO_ROOT, 'node_modules/.cache/ledge-sdk-schemas');
/** Bumped when the post-processing below changes, so that cached schemas are regenerated. */
const SCHEMA_FORMAT = 3;

/**
 * TypeScript's empty object type `{}` (the SDK's placeholder for "any bindings list") accepts every value but
 * null and undefined, arrays included; the generator renders it `{ "type": "object" }`, which refuses arrays.
 * Rewrite those nodes to what TypeScript means, so the schema is no stricter than the SDK's type.
 */
function openEmptyObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openEmptyObjects);
  if (!node || typeof node !== 'object') return node;
  const entries = Object.entries(node as Record<string, unknown>);
  if (entries.length === 1 && (node as JsonSchema)['type'] === 'object') return { not: { type: 'null' } };
  return Object.fromEntries(entries.map(([key, value]) => [key, openEmptyObjects(value)]));
}

function packageVersion(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The text of `export interface <name> { ... }` in the module's .d.ts, renamed. */
function interfaceSource(module: string, name: string, rename: string): string {
  const text = readFileSync(join(SDK_ROOT, 'resources', `${module}.d.ts`), 'utf8');
  const start = text.indexOf(`export interface ${name} {`);
  if (start < 0) throw new Error(`no interface ${name} in ${module}.d.ts`);
  let depth = 0;
  for (let i = text.indexOf('{', start); i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) {
      return text.slice(start, i + 1).replace(`export interface ${name} {`, `interface ${rename} {`);
    }
  }
  throw new Error(`unterminated interface ${name} in ${module}.d.ts`);
}

/** A schema that says nothing: no type at all, or an object (or array of them) without properties. */
function isHollow(schema: JsonSchema | undefined): boolean {
  if (!schema) return true;
  if (schema['type'] === 'array') return isHollow(schema['items'] as JsonSchema | undefined);
  if (schema['type'] === 'object') {
    const properties = Object.values((schema['properties'] as Record<string, JsonSchema> | undefined) ?? {});
    if (properties.length > 0) return properties.every((property) => Object.keys(property).length === 0);
    return !schema['additionalProperties'];
  }
  return !schema['type'] && !schema['anyOf'] && !schema['$ref'] && !schema['const'] && !schema['enum'];
}

/**
 * JSON Schemas of the given SDK types, generated from the SDK's own .d.ts files with ts-json-schema-generator.
 * Generation takes seconds (it type-checks the SDK), so the result is cached under node_modules/.cache, keyed
 * by the SDK's version, the generator's version and the type list: a new SDK release regenerates them, and
 * whatever it changed in a response type fails the schema test.
 */
export function sdkSchemas(types: Record<string, SdkType>): Record<string, JsonSchema> {
  const key = createHash('sha256')
    .update(packageVersion(SDK_ROOT))
    .update(packageVersion(join(REPO_ROOT, 'node_modules/ts-json-schema-generator')))
    .update(JSON.stringify(types))
    .update(String(SCHEMA_FORMAT))
    .digest('hex')
    .slice(0, 16);
  const cached = join(CACHE_DIR, `${key}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as Record<string, JsonSchema>;

  // One entry file exporting every type under its alias: one TypeScript program serves them all.
  const modules = [...new Set(Object.values(types).map((t) => t.module))];
  const lines = modules.map(
    (module, i) => `import type * as M${i} from ${JSON.stringify(join(SDK_ROOT, 'resources', `${module}.js`))};`,
  );
  for (const [alias, { module, type, copyInterface }] of Object.entries(types)) {
    if (copyInterface) lines.push(interfaceSource(module, copyInterface, `${alias}Interface`));
    const expression = copyInterface ? type.replaceAll(`$.${copyInterface}`, `${alias}Interface`) : type;
    lines.push(`export type ${alias} = ${expression.replaceAll('$.', `M${modules.indexOf(module)}.`)};`);
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  // The entry lives outside node_modules on purpose: the generator looks a type name up in the program's
  // files outside node_modules first and walks every file of the SDK only when that fails, once per type. With
  // the entry under node_modules that was 96 walks of the whole SDK (~40 s); here it is found at once (~3 s).
  const work = mkdtempSync(join(tmpdir(), 'ledge-sdk-schemas-'));
  const entry = join(work, 'entry.ts');
  const tsconfig = join(work, 'tsconfig.json');
  const schemas: Record<string, JsonSchema> = {};
  try {
    writeFileSync(entry, lines.join('\n') + '\n');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          skipLibCheck: true,
          types: [],
        },
        files: [entry],
      }),
    );
    const generator = createGenerator({
      path: entry,
      tsconfig,
      skipTypeCheck: true,
      expose: 'none',
      topRef: false,
      jsDoc: 'none',
      // TypeScript's object types are open: a field the SDK does not know is no mismatch.
      additionalProperties: true,
    });
    for (const alias of Object.keys(types)) {
      const schema = generator.createSchema(alias) as JsonSchema;
      // A name that did not resolve (or a class merged with the interface) yields a schema that accepts anything
      // or has no properties at all: refuse it rather than pass every answer.
      if (isHollow(schema)) {
        throw new Error(`SDK type ${alias} (${types[alias]!.module}) produced an empty schema: is the name right?`);
      }
      schemas[alias] = openEmptyObjects(schema) as JsonSchema;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  // Written aside then renamed: worktrees share node_modules, and a reader must never see half a file.
  const partial = `${cached}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(schemas));
  renameSync(partial, cached);
  return schemas;
}

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { putSchedules, setScriptSubdomain, uploadScript } from '../client/index.ts';
import { assetRules, readAssetDirectory, uploadAssets } from './asset-files.ts';
import { handler, type CliContext } from './context.ts';
import { currentMigrationTag, DurableObjectsConfigSchema, migrationsToUpload } from './durable-object-migrations.ts';
import { CliError } from './errors.ts';
import { printJson } from './output.ts';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const CONFIG_FILES = ['wrangler.toml', 'wrangler.json', 'wrangler.jsonc'] as const;

/** The part of a wrangler configuration Ledge understands. */
export const ProjectConfigSchema = z
  .object({
    name: z.string().min(1),
    main: z.string().min(1).optional(),
    compatibility_date: z.string().optional(),
    compatibility_flags: z.array(z.string()).default([]),
    account_id: z.string().optional(),
    workers_dev: z.boolean().default(true),
    vars: z.record(z.string(), z.unknown()).default({}),
    /** Sent as is in the upload's metadata, as wrangler does; the server checks the range. */
    limits: z.object({ cpu_ms: z.number().optional() }).loose().optional(),
    /** Cron Triggers, sent to PUT .../schedules after the upload as wrangler does (absent: left as they are). */
    triggers: z
      .object({ crons: z.array(z.string()).optional() })
      .loose()
      .optional(),
    /** Static assets, as wrangler reads them (docs/assets.md). */
    assets: z
      .object({
        directory: z.string().min(1),
        binding: z.string().regex(IDENTIFIER, 'must be a valid JavaScript identifier').optional(),
        html_handling: z.string().optional(),
        not_found_handling: z.string().optional(),
        run_worker_first: z.union([z.boolean(), z.array(z.string())]).optional(),
      })
      .loose()
      .optional(),
    r2_buckets: z
      .array(
        z.object({
          binding: z.string().regex(IDENTIFIER, 'must be a valid JavaScript identifier'),
          bucket_name: z.string().min(1),
          preview_bucket_name: z.string().optional(),
          jurisdiction: z.string().optional(),
        }),
      )
      .default([]),
    ...DurableObjectsConfigSchema,
    /** Workers KV: wrangler's `id` is the namespace's (docs/kv.md). */
    kv_namespaces: z
      .array(
        z.object({
          binding: z.string().regex(IDENTIFIER, 'must be a valid JavaScript identifier'),
          id: z.string().min(1),
          preview_id: z.string().optional(),
        }),
      )
      .default([]),
    /** Service bindings to other Workers of the account (docs/service-bindings.md). */
    services: z
      .array(
        z.object({
          binding: z.string().regex(IDENTIFIER, 'must be a valid JavaScript identifier'),
          service: z.string().min(1),
          entrypoint: z.string().regex(IDENTIFIER, 'must name an export (a JavaScript identifier)').optional(),
        }),
      )
      .default([]),
  })
  .loose();
export type ProjectConfig = z.infer<typeof ProjectConfigSchema> & { path: string };

/** Finds and reads wrangler.toml / wrangler.json / wrangler.jsonc (or `explicit`), validated. */
// esbuild, smol-toml and jsonc-parser are loaded on use: every `ledge` command loads this file.
export async function readProjectConfig(cwd: string, explicit?: string): Promise<ProjectConfig> {
  const path = explicit ? resolve(cwd, explicit) : CONFIG_FILES.map((f) => join(cwd, f)).find((p) => existsSync(p));
  if (!path || !existsSync(path)) {
    throw new CliError(`no ${CONFIG_FILES.join(' / ')} in ${cwd} (create a project with \`ledge create app <dir>\`)`);
  }
  const text = readFileSync(path, 'utf8');
  let raw: unknown;
  try {
    if (path.endsWith('.toml')) {
      raw = (await import('smol-toml')).parse(text);
    } else {
      const jsonc = await import('jsonc-parser');
      const errors: ParseError[] = [];
      raw = jsonc.parse(text, errors, { allowTrailingComma: true });
      if (errors[0]) throw new Error(`${jsonc.printParseErrorCode(errors[0].error)} at offset ${errors[0].offset}`);
    }
  } catch (error) {
    throw new CliError(`cannot parse ${path}: ${(error as Error).message}`);
  }
  const parsed = ProjectConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CliError(`invalid ${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  for (const name of Object.keys(parsed.data.vars)) {
    if (!IDENTIFIER.test(name))
      throw new CliError(`invalid ${path}: vars.${name}: must be a valid JavaScript identifier`);
  }
  return { ...parsed.data, path };
}

/**
 * Bundles the entry point (TypeScript included) into one ES module, as wrangler does, with its source map
 * (sources relative to the project), which the server uses to show a load error in the user's files.
 */
export async function bundleWorker(entry: string, projectDir = dirname(entry)): Promise<{ code: string; map: string }> {
  const esbuild = await import('esbuild');
  try {
    const result = await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      target: 'es2022',
      platform: 'neutral',
      conditions: ['workerd', 'worker', 'browser'],
      mainFields: ['browser', 'module', 'main'],
      external: ['cloudflare:*', 'node:*'],
      write: false,
      logLevel: 'silent',
      sourcemap: 'external',
      // Not written (write: false): names the output so the map's sources are relative to the project.
      outfile: join(projectDir, 'index.js'),
    });
    const file = (suffix: string) => result.outputFiles.find((f) => f.path.endsWith(suffix))!.text;
    return { code: file('index.js'), map: file('index.js.map') };
  } catch (error) {
    const failure = error as {
      errors?: { text: string; location?: { file: string; line: number; column: number } | null }[];
    };
    const first = failure.errors?.[0];
    if (!first) throw error;
    const where = first.location ? `${first.location.file}:${first.location.line}:${first.location.column}: ` : '';
    throw new CliError(`build failed: ${where}${first.text}`);
  }
}

/** Picks the account: --account-id, then the project's account_id, then the connection's default. */
export async function projectAccountId(
  ctx: CliContext,
  config: { account_id?: string | undefined } | undefined,
): Promise<string> {
  const flag = ctx.options.accountId;
  if (typeof flag === 'string' && flag) return flag;
  if (config?.account_id) return config.account_id;
  return ctx.accountId();
}

export function registerDeploy(program: Command): void {
  program
    .command('deploy')
    .description('Bundle the function of the current project (wrangler.toml/.json/.jsonc) and deploy it')
    .option(
      '--config <path>',
      'configuration file (default: wrangler.toml, wrangler.json or wrangler.jsonc in the current directory)',
    )
    .option('--name <name>', 'script name (default: `name` from the configuration)')
    .option('--json', 'print JSON ({ "url": ... })')
    .action(
      handler(async (ctx) => {
        const config = await readProjectConfig(process.cwd(), ctx.options['config'] as string | undefined);
        const name = (ctx.options['name'] as string | undefined) ?? config.name;
        if (!config.main && !config.assets)
          throw new CliError(`invalid ${config.path}: "main" (the entry point) or [assets] is required`);
        const entry = config.main && resolve(dirname(config.path), config.main);
        if (entry && !existsSync(entry)) throw new CliError(`the entry point ${entry} does not exist`);
        const { code, map } = entry ? await bundleWorker(entry, dirname(config.path)) : { code: '', map: '' };
        const accountId = await projectAccountId(ctx, config);
        const assets = config.assets && (await deployAssets(ctx, config, accountId, name));
        const bindings: Record<string, unknown>[] = [
          ...Object.entries(config.vars).map(([varName, value]) =>
            typeof value === 'string'
              ? { name: varName, type: 'plain_text', text: value }
              : { name: varName, type: 'json', json: value },
          ),
          ...config.r2_buckets.map((b) => ({
            name: b.binding,
            type: 'r2_bucket',
            bucket_name: b.bucket_name,
            ...(b.jurisdiction ? { jurisdiction: b.jurisdiction } : {}),
          })),
          ...config.kv_namespaces.map((n) => ({ name: n.binding, type: 'kv_namespace', namespace_id: n.id })),
        ];
        for (const b of config.durable_objects?.bindings ?? []) {
          bindings.push({
            name: b.name,
            type: 'durable_object_namespace',
            class_name: b.class_name,
            ...(b.script_name ? { script_name: b.script_name } : {}),
          });
        }
        for (const b of config.services)
          bindings.push({
            name: b.binding,
            type: 'service',
            service: b.service,
            ...(b.entrypoint ? { entrypoint: b.entrypoint } : {}),
          });
        if (config.assets?.binding) bindings.push({ name: config.assets.binding, type: 'assets' });
        const migrations =
          config.migrations.length > 0
            ? migrationsToUpload(config.migrations, await currentMigrationTag(ctx.client, accountId, name))
            : undefined;
        const uploaded = await uploadScript(ctx.client, accountId, name, {
          mainModule: entry ? 'index.js' : '',
          modules: entry
            ? [
                { name: 'index.js', content: code },
                { name: 'index.js.map', content: map, contentType: 'application/source-map' },
              ]
            : [],
          bindings: entry ? bindings : [],
          assets,
          compatibilityDate: config.compatibility_date,
          compatibilityFlags: config.compatibility_flags,
          limits: config.limits?.cpu_ms === undefined ? undefined : { cpu_ms: config.limits.cpu_ms },
          migrations,
        });
        const route = await setScriptSubdomain(ctx.client, accountId, name, config.workers_dev);
        const crons = config.triggers?.crons;
        if (crons !== undefined) await putSchedules(ctx.client, accountId, name, crons);
        const url = config.workers_dev ? (route.url ?? null) : null;
        if (ctx.json) {
          printJson({ url, name, deployment_id: uploaded.deployment_id, etag: uploaded.etag });
          return;
        }
        if (entry) process.stdout.write(`Uploaded ${name} (${Buffer.byteLength(code)} bytes)\n`);
        process.stdout.write(url ? `Deployed ${name}: ${url}\n` : `Deployed ${name} (workers_dev = false: no URL)\n`);
      }),
    );
}

/** Uploads the files of `[assets]` the account lacks; the completion token and config the script upload carries. */
async function deployAssets(ctx: CliContext, config: ProjectConfig, accountId: string, name: string) {
  const settings = config.assets!;
  const directory = resolve(dirname(config.path), settings.directory);
  if (!existsSync(directory)) throw new CliError(`the assets directory ${directory} does not exist`);
  let files;
  try {
    files = await readAssetDirectory(directory);
  } catch (error) {
    throw new CliError(`cannot read the assets in ${directory}: ${(error as Error).message}`);
  }
  const { jwt, uploaded } = await uploadAssets(ctx.client, accountId, name, files);
  if (!ctx.json)
    process.stdout.write(
      `Assets: ${files.length} files, ${uploaded} uploaded (${files.length - uploaded} already stored)\n`,
    );
  return {
    jwt,
    config: {
      html_handling: settings.html_handling,
      not_found_handling: settings.not_found_handling,
      run_worker_first: settings.run_worker_first,
      ...(await assetRules(directory)),
    },
  };
}

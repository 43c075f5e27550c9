import { z } from 'zod';
import { ApiError, type ApiClient } from '../client/index.ts';

/** `[[durable_objects.bindings]]` and `[[migrations]]` of a wrangler config, as wrangler reads them. */
export const DurableObjectsConfigSchema = {
  durable_objects: z
    .object({
      bindings: z
        .array(z.object({ name: z.string(), class_name: z.string(), script_name: z.string().optional() }).loose())
        .default([]),
    })
    .loose()
    .optional(),
  migrations: z
    .array(
      z
        .object({
          tag: z.string().min(1),
          new_classes: z.array(z.string()).optional(),
          new_sqlite_classes: z.array(z.string()).optional(),
          renamed_classes: z.array(z.object({ from: z.string(), to: z.string() })).optional(),
          deleted_classes: z.array(z.string()).optional(),
          transferred_classes: z
            .array(z.object({ from: z.string(), from_script: z.string(), to: z.string() }))
            .optional(),
        })
        .loose(),
    )
    .default([]),
};

type MigrationEntry = z.infer<typeof DurableObjectsConfigSchema.migrations>[number];

/**
 * The migrations an upload carries, as wrangler computes them: those after the Worker's current tag (all of
 * them when it has none, or when its tag is not in the config, which the API then judges), none when it is
 * at the last one.
 */
export function migrationsToUpload(entries: MigrationEntry[], currentTag: string | null) {
  if (entries.length === 0) return undefined;
  const steps = (from: number) => entries.slice(from).map(({ tag: _tag, ...step }) => step);
  const newTag = entries.at(-1)!.tag;
  if (currentTag === null) return { new_tag: newTag, steps: steps(0) };
  const index = entries.findIndex((entry) => entry.tag === currentTag);
  if (index === entries.length - 1) return undefined;
  return { old_tag: currentTag, new_tag: newTag, steps: steps(index + 1) };
}

/** The Worker's current migration tag (null: no Worker yet, or no migration applied). */
export async function currentMigrationTag(api: ApiClient, accountId: string, name: string): Promise<string | null> {
  try {
    const { result } = await api.request<{ default_environment?: { script?: { migration_tag?: string } } }>(
      'GET',
      `/accounts/${encodeURIComponent(accountId)}/workers/services/${encodeURIComponent(name)}`,
    );
    return result.default_environment?.script?.migration_tag ?? null;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

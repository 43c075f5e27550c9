import { z } from 'zod';

/**
 * A class name is a JavaScript identifier (the wrapper module exports it by name), outside the platform's
 * `__ledge` names.
 */
const className = z
  .string()
  .max(255)
  .regex(/^[A-Za-z_$][A-Za-z0-9_$]*$/, 'a Durable Object class name must be a JavaScript identifier')
  .refine((name) => !name.toLowerCase().startsWith('__ledge'), 'names starting with __ledge belong to the platform');

/** One step of `migrations.steps` as wrangler sends it (its `[[migrations]]` entries without their tag). */
export const MigrationStepSchema = z
  .object({
    new_classes: z.array(className).default([]),
    new_sqlite_classes: z.array(className).default([]),
    renamed_classes: z.array(z.object({ from: className, to: className })).default([]),
    deleted_classes: z.array(className).default([]),
    transferred_classes: z
      .array(z.object({ from: className, from_script: z.string().min(1), to: className }))
      .default([]),
  })
  .loose();
export type MigrationStep = z.infer<typeof MigrationStepSchema>;

/** `metadata.migrations` of an upload: the tag the script must have now, the one it gets, and the steps between. */
export const MigrationsSchema = z
  .object({
    old_tag: z.string().max(1024).optional(),
    new_tag: z.string().max(1024).optional(),
    steps: z.array(MigrationStepSchema).max(1000).default([]),
  })
  .loose();
export type Migrations = z.infer<typeof MigrationsSchema>;

/** A class a migration created: its objects live under `id` (renames and transfers keep it). */
export interface NamespaceRecord {
  id: string;
  account_id: string;
  script_name: string;
  class_name: string;
  use_sqlite: boolean;
  created_on: string;
}

import { accountMigrations } from '../accounts/index.ts';
import type { Migration } from '../db/index.ts';

/** Every subsystem's migrations, in dependency order. Applied on every start; each runs once. */
export const allMigrations: readonly Migration[] = [...accountMigrations];

import { clip } from '../../shared/errors.ts';
import { DurableObjectErrors } from './errors.ts';
import type { Migrations, NamespaceRecord } from './schemas.ts';

/** What an upload's migrations do to a script's Durable Object classes, computed before anything is written. */
export interface MigrationPlan {
  /** The script's migration tag after the upload. */
  tag: string | null;
  /** The script's classes after the upload (created ones with fresh ids). */
  classes: NamespaceRecord[];
  /** Namespaces whose objects' data goes once the upload is deployed. */
  deleted: NamespaceRecord[];
  /** Whether anything changes (tag or classes): then the store writes it. */
  changed: boolean;
}

export interface PlanInput {
  accountId: string;
  script: string;
  currentTag: string | null;
  /** The script's classes now. */
  current: NamespaceRecord[];
  /** The account's classes of other scripts (the sources of `transferred_classes`). */
  others: NamespaceRecord[];
  migrations: Migrations | undefined;
  /** Classes the new version's bindings name on this script. */
  boundClasses: string[];
  newId: () => string;
  now: string;
}

/**
 * Applies the steps in order to the script's classes, as Cloudflare does: `old_tag` must be the current tag
 * (10079), a created class must be new, a renamed, deleted or transferred one must exist (10074), and every
 * class a binding names must exist afterwards (10061). Pure: the caller writes the result.
 */
export function planMigrations(input: PlanInput): MigrationPlan {
  const { migrations } = input;
  if (!migrations) {
    checkBound(input.boundClasses, input.current);
    return { tag: input.currentTag, classes: input.current, deleted: [], changed: false };
  }
  if ((migrations.old_tag ?? null) !== input.currentTag) throw DurableObjectErrors.tagPrecondition(input.currentTag);
  const classes = new Map(input.current.map((record) => [record.class_name, record]));
  const deleted: NamespaceRecord[] = [];
  const taken = new Set<string>();
  const mustBeFree = (name: string, step: string) => {
    if (classes.has(name))
      throw DurableObjectErrors.migrationConflict(
        `Cannot apply ${step} migration to class '${clip(name)}' that is already depended on by existing Durable Objects`,
      );
  };
  const mustExist = (name: string, step: string): NamespaceRecord => {
    const record = classes.get(name);
    if (!record)
      throw DurableObjectErrors.migrationConflict(
        `Cannot apply ${step} migration to class '${clip(name)}' that is not a Durable Object class of this script`,
      );
    return record;
  };
  for (const step of migrations.steps) {
    const created = [
      ...step.new_classes.map((name) => ({ name, sqlite: false })),
      ...step.new_sqlite_classes.map((name) => ({ name, sqlite: true })),
    ];
    for (const { name, sqlite } of created) {
      mustBeFree(name, sqlite ? '--new-sqlite-class' : '--new-class');
      classes.set(name, {
        id: input.newId(),
        account_id: input.accountId,
        script_name: input.script,
        class_name: name,
        use_sqlite: sqlite,
        created_on: input.now,
      });
    }
    for (const { from, to } of step.renamed_classes) {
      const record = mustExist(from, '--rename-class');
      mustBeFree(to, '--rename-class');
      classes.delete(from);
      classes.set(to, { ...record, class_name: to });
    }
    for (const name of step.deleted_classes) {
      deleted.push(mustExist(name, '--delete-class'));
      classes.delete(name);
    }
    for (const { from, from_script, to } of step.transferred_classes) {
      const source = input.others.find((r) => r.script_name === from_script && r.class_name === from);
      if (!source || taken.has(source.id))
        throw DurableObjectErrors.migrationConflict(
          `Cannot apply --transfer-class migration: the Worker '${clip(from_script)}' has no Durable Object class '${clip(from)}'`,
        );
      mustBeFree(to, '--transfer-class');
      taken.add(source.id);
      classes.set(to, { ...source, script_name: input.script, class_name: to });
    }
  }
  const after = [...classes.values()];
  checkBound(input.boundClasses, after);
  return { tag: migrations.new_tag ?? input.currentTag, classes: after, deleted, changed: true };
}

function checkBound(bound: string[], classes: NamespaceRecord[]): void {
  const missing = bound.find((name) => !classes.some((c) => c.class_name === name));
  if (missing !== undefined) throw DurableObjectErrors.notADurableObject(missing);
}

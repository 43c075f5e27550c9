import { clip, LedgeError } from '../../shared/errors.ts';

/** Cloudflare's errors for Durable Object migrations and bindings, with its codes and wording. */
export const DurableObjectErrors = {
  /** The upload's `old_tag` is not the script's current migration tag (or it has one and none was sent). */
  tagPrecondition: (current: string | null) =>
    new LedgeError(
      400,
      10079,
      current === null
        ? 'Migration tag precondition failed; the script has no migration tag yet, so old_tag must not be set'
        : `Migration tag precondition failed; current tag is '${clip(current)}'`,
    ),
  /** A binding (or a `script_name`-less reference) to a class no migration created. */
  notADurableObject: (className: string) =>
    new LedgeError(
      400,
      10061,
      `Cannot create binding for class '${clip(className)}' because it is not currently configured to implement Durable Objects. Ensure a --new-class migration has been applied to it.`,
    ),
  /** A migration step that does not fit the classes the script has. */
  migrationConflict: (message: string) => new LedgeError(400, 10074, message),
  /** A class a migration creates that the script does not export. */
  notExported: (className: string) =>
    new LedgeError(
      400,
      10070,
      `Cannot apply new-class migration to class '${clip(className)}' that is not exported by script`,
    ),
  /** `wrangler versions upload` with a migration: migrations are applied by a deployment only. */
  migrationInVersion: () =>
    new LedgeError(
      400,
      10211,
      'Version upload failed. You attempted to upload a version of a Worker that includes a Durable Object migration, but migrations must be fully applied via a non-versioned deployment (wrangler deploy).',
    ),
  /** A `script_name` binding to a class that Worker of the account does not host (or to a Worker it does not have). */
  remoteClassMissing: (className: string, script: string, scriptExists: boolean) =>
    new LedgeError(
      400,
      10061,
      scriptExists
        ? `Cannot create binding for class '${clip(className)}' of the Worker '${clip(script)}' because it is not currently configured to implement Durable Objects. Ensure a --new-class migration has been applied to it.`
        : `Cannot create binding for class '${clip(className)}' because the Worker '${clip(script)}' does not exist on this account.`,
    ),
  /**
   * `transferred_classes` on several nodes: the class's objects are in its old Worker's workerd cluster, and
   * nothing moves them into the new Worker's, so the class would start empty there. Refused before anything moves.
   */
  transferAcrossClusters: (className: string, script: string) =>
    new LedgeError(
      400,
      10074,
      `Cannot transfer class '${clip(className)}' from the Worker '${clip(script)}' on a server of several nodes: its objects would be left behind in that Worker's cluster. Transfers between Workers are supported on a single node only.`,
    ),
  namespaceNotFound: () => new LedgeError(404, 10066, 'This Durable Object namespace does not exist on your account.'),
};

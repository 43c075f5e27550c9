import type { ScriptRecord } from './types.ts';

/**
 * What refers to a Worker. The only link one Ledge script can have to another is `tail_consumers` (a tail
 * Worker): Ledge has no service bindings, Durable Objects or dispatch namespaces, so those lists stay empty.
 */
export interface TailProducer {
  producer: { script: string };
}

/** `tail_consumers` entries name their consumer as `{ service }` (wrangler's shape) or `{ name }`. */
function consumerName(entry: unknown): string | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { service, name } = entry as { service?: unknown; name?: unknown };
  if (typeof service === 'string') return service;
  return typeof name === 'string' ? name : undefined;
}

/** The other scripts of the account that use `name` as a tail Worker (`/workers/tails/by-consumer/{name}`). */
export function tailProducersOf(scripts: readonly ScriptRecord[], name: string): TailProducer[] {
  return scripts
    .filter((s) => s.name !== name && (s.settings.tail_consumers ?? []).some((c) => consumerName(c) === name))
    .map((s) => ({ producer: { script: s.name } }));
}

/** A script's tail_consumers without the entries naming `name` (what a forced delete leaves behind). */
export function withoutConsumer(consumers: readonly unknown[], name: string): unknown[] {
  return consumers.filter((c) => consumerName(c) !== name);
}

/** `GET /workers/scripts/{name}/references`, as wrangler's delete reads it. */
export function scriptReferences() {
  return {
    services: { incoming: [], outgoing: [], pages_function: false },
    durable_objects: [],
    dispatch_outbounds: [],
  };
}

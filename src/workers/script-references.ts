import type { ScriptRecord } from './types.ts';

/**
 * What refers to a Worker: `tail_consumers` (a tail Worker) and service bindings of deployed versions.
 * Ledge has no Durable Objects or dispatch namespaces here, so those lists stay empty.
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

/** A script of the account whose deployed version has a service binding (wrangler's shape of a reference). */
export interface ServiceReference {
  service: string;
  environment: 'production';
}

/**
 * `GET /workers/scripts/{name}/references`, as wrangler's delete reads it: `incoming` are the Workers bound
 * to this one (wrangler lists them and asks before a forced delete), `outgoing` those it binds to.
 */
export function scriptReferences(incoming: string[] = [], outgoing: string[] = []) {
  const reference = (service: string): ServiceReference => ({ service, environment: 'production' });
  return {
    services: { incoming: incoming.map(reference), outgoing: outgoing.map(reference), pages_function: false },
    durable_objects: [],
    dispatch_outbounds: [],
  };
}

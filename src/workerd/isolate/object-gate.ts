import { DurableObject, WorkerEntrypoint, env as platformEnv } from 'cloudflare:workers';
import { OBJECT_TARGET_HEADER, RESERVED_BINDING_PREFIX, takeBinding, type ObjectTarget } from './contract.js';

type Stub = Record<string, unknown>;

// The classes' hidden namespace bindings (config/bindings/durable-object.ts), taken out of env when this module
// loads, before the user's modules: neither a handler's env, nor an object's, nor cloudflare:workers shows them.
const GATE_PREFIX = `${RESERVED_BINDING_PREFIX}_DO_`;
const namespaces = new Map<string, DurableObjectNamespace>();
for (const name of Object.keys((platformEnv as object | null) ?? {}))
  if (name.startsWith(GATE_PREFIX)) namespaces.set(name, takeBinding(platformEnv, name) as DurableObjectNamespace);

/**
 * The entrypoint another script of the account reaches one of this script's Durable Object classes through
 * (remote-objects.ts): each call names the object (by name when the caller had one, so `ctx.id.name` is the
 * same as for a local caller) and is made on this process's own stub, through the class's hidden namespace
 * binding. `fetch` carries the object in a header, which goes before the object sees the request.
 */
export function objectGate(binding: string): unknown {
  return class extends WorkerEntrypoint {
    #stub(target: ObjectTarget): Stub {
      const namespace = namespaces.get(binding);
      if (!namespace) throw new Error('this Durable Object class is not hosted here any more');
      const id = target.name !== null ? namespace.idFromName(target.name) : namespace.idFromString(target.id);
      return namespace.get(id) as unknown as Stub;
    }

    call(target: ObjectTarget, method: string, args: unknown[]): unknown {
      // An RPC stub's members are workerd's callable properties: called on the stub itself, as a caller would.
      const stub = this.#stub(target) as Record<string, (...a: unknown[]) => unknown>;
      return stub[method]!(...args);
    }

    override fetch(request: Request): Promise<Response> {
      const target = JSON.parse(request.headers.get(OBJECT_TARGET_HEADER) ?? 'null') as ObjectTarget | null;
      if (!target) return Promise.resolve(new Response('no object named', { status: 400 }));
      const forwarded = new Request(request);
      forwarded.headers.delete(OBJECT_TARGET_HEADER);
      return (this.#stub(target) as unknown as Fetcher).fetch(forwarded);
    }
  };
}

/** The caller's class whose namespace only derives another script's ids: none of its objects is ever made. */
export function idsOnly(): unknown {
  return class extends DurableObject {
    override fetch(): Response {
      return new Response('not an object of this script', { status: 500 });
    }
  };
}

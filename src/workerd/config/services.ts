import type { WorkerdR2Service } from './input.ts';
import type { Service } from './types.ts';

/** A read-only directory served over HTTP to the workers bound to it (GET of a path reads a file). */
export function diskService(name: string, path: string): Service {
  return { name, disk: { path, writable: false } };
}

/** An HTTP server outside workerd, each request carrying the headers the server knows its caller by. */
export function externalHttpService(name: string, target: WorkerdR2Service): Service {
  return {
    name,
    external: {
      address: target.address,
      http: { injectRequestHeaders: target.injectRequestHeaders.map(({ name, value }) => ({ name, value })) },
    },
  };
}

import { join } from 'node:path';
import type { Socket } from '../types.ts';

/** The bundled engines need RPC (2024-04-03 or later); the platform's date is the one its own workers use. */
export const ENGINE_COMPATIBILITY_DATE = '2025-01-01';

/** The socket file of one engine kind of one account. */
export function engineSocketPath(socketDir: string, kind: string): string {
  return join(socketDir, `${kind}.sock`);
}

/** An engine kind's unix socket, named after the kind, serving `service`. */
export function engineSocket(kind: string, socketDir: string, service: string): Socket {
  return { name: kind, address: `unix:${engineSocketPath(socketDir, kind)}`, http: {}, service };
}
